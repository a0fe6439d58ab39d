// Communication between devices: a link, the all-reduce algorithms and the
// time each takes to all-reduce a gradient. One formula for every layer that
// times communication: the modeled device step (device), the data-parallel
// step modeled from a measured one (timing) and the scaling projections
// (project).
#ifndef FITSPEED_CORE_COMM_H_
#define FITSPEED_CORE_COMM_H_

#include <string>
#include <string_view>

namespace fitspeed {

// A link between two devices or two nodes.
struct Link {
  double bandwidth_bytes_per_s = 0;  // sustained bytes per second, one direction (may be +inf)
  double latency_s = 0;              // per message (one step of the algorithm)
};

enum class AllReduceAlgorithm {
  kRing,          // one ring over all devices
  kTree,          // binomial-tree reduce, then broadcast
  kHierarchical,  // in-node reduce-scatter, between-node ring all-reduce, in-node all-gather
};
std::string AllReduceName(AllReduceAlgorithm algorithm);   // "ring", "tree", "hierarchical"
AllReduceAlgorithm ParseAllReduce(std::string_view name);  // throws UsageError

// Where the devices sit and how they talk.
struct CommModel {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;
  Link intra_node;  // between devices of one node
  Link inter_node;  // between nodes (through one node's network interface)
  // Devices per node; 0 means every device is in one node. A ring or tree that
  // spans nodes runs at the pace of its slowest link (the inter-node one).
  int devices_per_node = 0;
};

// Throws UsageError naming the field that breaks its rule (bandwidths > 0 where
// used, +inf allowed for a link whose bandwidth term is negligible; latencies
// >= 0 and finite; devices_per_node >= 0).
void ValidateCommModel(const CommModel& comm);

// The ring's shape factors: t_comm(n) = RingBandwidthFactor(n)*S/B +
// RingLatencyFactor(n)*a, i.e. 2(n-1)/n and 2(n-1); both 0 for n <= 1.
double RingBandwidthFactor(int devices);
double RingLatencyFactor(int devices);

// Ring all-reduce of `bytes` over n devices:
//   2(n-1)/n * S/B + 2(n-1)*a
// (Patarasuk & Yuan, J. Parallel Distrib. Comput. 69(2), 2009; Thakur,
// Rabenseifner & Gropp, IJHPCA 19(1), 2005). 0 for n = 1.
double RingAllReduceTime(double bytes, int devices, const Link& link);

// Binomial-tree reduce followed by a binomial-tree broadcast:
//   2*ceil(log2 n)*(a + S/B)      (Thakur, Rabenseifner & Gropp 2005, sec. 4).
double TreeAllReduceTime(double bytes, int devices, const Link& link);

// Two-level all-reduce over `nodes` nodes of `per_node` devices: ring
// reduce-scatter in each node, then the nodes all-reduce their data through
// their network interfaces (a ring over nodes: 2(k-1)/k * S/B_inter +
// 2(k-1)*a_inter), then ring all-gather in each node. The in-node part is one
// ring all-reduce of S over per_node devices. `rails` (1 to per_node) is the
// number of network interfaces of a node that carry the between-node part in
// parallel, each `inter`: with one interface per device (a DGX node's eight
// NICs, NCCL's rings one per rail) each carries a ring all-reduce of S/rails,
// the shard its device holds after the in-node reduce-scatter.
double HierarchicalAllReduceTime(double bytes, int per_node, int nodes, const Link& intra,
                                 const Link& inter, int rails = 1);

// Seconds to all-reduce `bytes` over `devices` devices under `comm`.
double AllReduceTime(double bytes, int devices, const CommModel& comm);

// Bytes of one gradient: parameters * bytes per parameter (4 for FP32, 2 for
// FP16/BF16 gradients).
double GradientBytes(double parameters, double bytes_per_parameter);

}  // namespace fitspeed

#endif  // FITSPEED_CORE_COMM_H_
