#include "mpi/mpi_communicator.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

void Check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw InputError(fmt::format("MPI: {} failed: {}", call, std::string(text, length)));
}

// MPI counts are int: longer buffers go in pieces of at most this many elements.
constexpr int64_t kMaxCount = INT_MAX / 2;

template <typename T>
MPI_Datatype TypeOf() {
  return sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT;
}

class MpiPending final : public Communicator::Pending {
 public:
  std::vector<MPI_Request> requests;
  bool Test() override {
    int done = 0;
    Check(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    return done != 0;
  }
  void Wait() override {
    Check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  }
  ~MpiPending() override {
    // A request left in flight (an exception unwinding) must still complete.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
};

int live_communicators = 0;
bool started_here = false;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    ++live_communicators;
    Check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    Check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    MPI_Comm local;
    Check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    int local_rank = 0;
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
    int leaders = local_rank == 0 ? 1 : 0;
    Check(MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
    nodes_ = leaders;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library_ = std::string(version, static_cast<size_t>(length));
    library_ = library_.substr(0, library_.find_first_of(",\n"));
  }
  ~MpiCommunicator() override {
    if (--live_communicators == 0 && started_here) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  int nodes() const override { return nodes_; }
  std::string Describe() const override {
    return fmt::format("{}; {} rank{} on {} node{}", library_, size_, size_ == 1 ? "" : "s", nodes_,
                       nodes_ == 1 ? "" : "s");
  }

  std::unique_ptr<Pending> StartSum(float* data, int64_t count) override {
    return Start(data, count);
  }
  std::unique_ptr<Pending> StartSum(double* data, int64_t count) override {
    return Start(data, count);
  }
  void Sum(float* data, int64_t count) override { Start(data, count)->Wait(); }
  void Sum(double* data, int64_t count) override { Start(data, count)->Wait(); }
  void Broadcast(double* values, int count) override {
    Check(MPI_Bcast(values, count, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  }
  void Barrier() override { Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  void PingPong(int peer, char* buffer, int64_t bytes) override {
    if (peer <= 0 || peer >= size_) {
      throw UsageError(
          fmt::format("ping-pong peer {}: expected a rank in [1, {}]", peer, size_ - 1));
    }
    if (rank_ != 0 && rank_ != peer) return;
    for (int64_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, bytes - at));
      if (rank_ == 0) {
        Check(MPI_Send(buffer + at, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD), "MPI_Send");
        Check(MPI_Recv(buffer + at, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
      } else {
        Check(MPI_Recv(buffer + at, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
        Check(MPI_Send(buffer + at, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD), "MPI_Send");
      }
      if (bytes == 0) break;
    }
  }

 private:
  template <typename T>
  std::unique_ptr<Pending> Start(T* data, int64_t count) {
    auto pending = std::make_unique<MpiPending>();
    for (int64_t at = 0; at < count; at += kMaxCount) {
      MPI_Request request;
      Check(
          MPI_Iallreduce(MPI_IN_PLACE, data + at, static_cast<int>(std::min(kMaxCount, count - at)),
                         TypeOf<T>(), MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
      pending->requests.push_back(request);
    }
    return pending;
  }

  int rank_ = 0, size_ = 1, local_size_ = 1, nodes_ = 1;
  std::string library_;
};

}  // namespace

std::unique_ptr<Communicator> InitMpi(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    Check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    started_here = true;
  }
  return std::make_unique<MpiCommunicator>();
}

bool LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

void AbortMpi(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace fitspeed
