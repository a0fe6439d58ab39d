// MPI as the Communicator of a data-parallel sweep (fitspeed/timing/data_parallel.h)
// and of `fitspeed linkbench`: Debian's Open MPI here, any MPI-3 library
// elsewhere. In library fitspeed_mpi (mpi/), which links MPI; the fitspeed
// library itself does not.
//
//   mpirun -np 2 fitspeed sweep resnet18-cifar --data-parallel
//   mpirun -H host1,host2 -np 2 fitspeed linkbench
#ifndef FITSPEED_MPI_MPI_COMMUNICATOR_H_
#define FITSPEED_MPI_MPI_COMMUNICATOR_H_

#include <memory>

#include "fitspeed/timing/data_parallel.h"

namespace fitspeed {

// MPI_COMM_WORLD, MPI started here (MPI_THREAD_FUNNELED: only the calling
// thread talks to MPI; kernel threads never do) unless it already runs; the
// last such communicator destroyed finalizes it. Run without mpirun it is a
// singleton job of one rank.
std::unique_ptr<Communicator> InitMpi(int* argc, char*** argv);

// Whether an MPI launcher (mpirun/mpiexec of Open MPI, MPICH or Slurm's PMI)
// started this process, from its environment. Ask before InitMpi: a singleton
// MPI_Init sets Open MPI's variables too.
bool LaunchedByMpi();

// Ends every rank of the job with `code` (MPI_Abort): what a rank that failed
// alone must do, or the others wait for it in their next collective forever.
[[noreturn]] void AbortMpi(int code);

}  // namespace fitspeed

#endif  // FITSPEED_MPI_MPI_COMMUNICATOR_H_
