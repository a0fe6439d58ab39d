// Capacity planning: which T4 configuration trains ResNet-50 for 90 ImageNet
// epochs within three days, fastest and cheapest first, Pareto set marked.
#include <iostream>

#include "fitspeed/project/model_params.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/report.h"

int main() {
  using namespace fitspeed;
  // One T4, fitted by `fitspeed fit` to the Pollux trace
  // (tests/data/measured/pollux_t4_single_node.csv, model=imagenet, 1 GPU).
  SpeedLaw t4;
  t4.v0_sps = 231.9;  // images/s
  t4.t_s = 0.0719;    // s per step

  // Data parallel over g4dn.12xlarge-like nodes: 4 GPUs per node, an in-node
  // link and a 50 Gbit/s network between nodes (assumed values: set yours).
  DataParallelModel dp;
  dp.single_device = t4;
  dp.gradient_bytes = GradientBytes(FindPublishedModel("resnet50")->parameters, 4);
  dp.comm.algorithm = AllReduceAlgorithm::kHierarchical;
  dp.comm.intra_node = Link{8e9, 20e-6};  // bytes/s, s
  dp.comm.inter_node = Link{6.25e9, 50e-6};
  dp.comm.devices_per_node = 4;

  std::vector<PlanCandidate> candidates = {CandidateFromLaw("t4", 1, t4, {64, 128, 200})};
  for (int n : {4, 8, 16}) {
    candidates.push_back(CandidateFromScaling("t4", n, dp, {64.0 * n, 128.0 * n, 200.0 * n}));
  }

  PlanRequest request;
  request.samples_per_epoch = 1281167;  // ImageNet-1k training images
  request.epochs = 90;
  request.deadline_s = 3 * 86400;
  request.prices = ParsePrices({"t4=0.98"});  // per GPU-hour: put your own price here

  const PlanResult plan = Plan(candidates, request);
  WritePlan(std::cout, plan, OutputFormat::kTable);

  // The fastest plan as an epoch table (10 ... 2000 epochs).
  if (plan.fastest) {
    const PlanRow& best = plan.rows[*plan.fastest];
    Workload workload;
    workload.samples_per_epoch = request.samples_per_epoch;
    ProjectOptions options;
    options.prices = request.prices;
    const EpochModel model =
        EpochModelFromScaling(dp, best.devices, best.batch / best.devices, workload, "t4");
    std::cout << "\n";
    WriteProjection(std::cout, MakeProjection({model}, options), OutputFormat::kTable);
  }
  return plan.fastest ? 0 : 1;
}
