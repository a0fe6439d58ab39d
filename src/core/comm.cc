#include "fitspeed/core/comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/finite.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

void RequireBandwidth(const Link& link, const char* which) {
  if (!(link.bandwidth_bytes_per_s > 0)) {
    throw UsageError(fmt::format("the {} link needs a bandwidth > 0 (bytes/s), got {}", which,
                                 link.bandwidth_bytes_per_s));
  }
}

// ceil(log2 n) for n >= 1.
int CeilLog2(int n) {
  int levels = 0;
  for (long long reach = 1; reach < n; reach *= 2) ++levels;
  return levels;
}

}  // namespace

double RingBandwidthFactor(int devices) {
  return devices <= 1 ? 0.0 : 2.0 * (devices - 1) / devices;
}
double RingLatencyFactor(int devices) { return devices <= 1 ? 0.0 : 2.0 * (devices - 1); }

std::string AllReduceName(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::kRing:
      return "ring";
    case AllReduceAlgorithm::kTree:
      return "tree";
    case AllReduceAlgorithm::kHierarchical:
      return "hierarchical";
  }
  FITSPEED_CHECK(false, "unknown all-reduce algorithm");
}

AllReduceAlgorithm ParseAllReduce(std::string_view name) {
  if (name == "ring") return AllReduceAlgorithm::kRing;
  if (name == "tree") return AllReduceAlgorithm::kTree;
  if (name == "hierarchical") return AllReduceAlgorithm::kHierarchical;
  throw UsageError(
      fmt::format("unknown all-reduce algorithm '{}' (known: ring, tree, hierarchical)", name));
}

void ValidateCommModel(const CommModel& comm) {
  for (const auto& [link, which] :
       {std::pair{&comm.intra_node, "intra-node"}, std::pair{&comm.inter_node, "inter-node"}}) {
    // An infinite bandwidth stands for a bandwidth term of 0 (see RingCommFit::AsLink).
    if (!(link->bandwidth_bytes_per_s >= 0)) {
      throw UsageError(
          fmt::format("{} bandwidth must be >= 0, got {}", which, link->bandwidth_bytes_per_s));
    }
    if (!NonNegativeFinite(link->latency_s)) {
      throw UsageError(
          fmt::format("{} latency must be >= 0 and finite, got {}", which, link->latency_s));
    }
  }
  if (comm.devices_per_node < 0) {
    throw UsageError(fmt::format("devices per node must be >= 0, got {}", comm.devices_per_node));
  }
}

double RingAllReduceTime(double bytes, int devices, const Link& link) {
  if (devices <= 1) return 0;
  RequireBandwidth(link, "ring's");
  // Patarasuk & Yuan 2009: 2(n-1)/n * S/B + 2(n-1)*a.
  return RingBandwidthFactor(devices) * bytes / link.bandwidth_bytes_per_s +
         RingLatencyFactor(devices) * link.latency_s;
}

double TreeAllReduceTime(double bytes, int devices, const Link& link) {
  if (devices <= 1) return 0;
  RequireBandwidth(link, "tree's");
  // Thakur, Rabenseifner & Gropp 2005: reduce + broadcast, ceil(lg p)(a + S/B) each.
  return 2.0 * CeilLog2(devices) * (link.latency_s + bytes / link.bandwidth_bytes_per_s);
}

double HierarchicalAllReduceTime(double bytes, int per_node, int nodes, const Link& intra,
                                 const Link& inter, int rails) {
  if (rails < 1 || rails > std::max(per_node, 1)) {
    throw UsageError(fmt::format("rails must be 1 to the {} devices of a node, got {}",
                                 std::max(per_node, 1), rails));
  }
  // In-node reduce-scatter + all-gather cost one in-node ring all-reduce; the
  // nodes' network interfaces carry a ring all-reduce of S between nodes,
  // split over `rails` interfaces working at once.
  return RingAllReduceTime(bytes, per_node, intra) + RingAllReduceTime(bytes / rails, nodes, inter);
}

double AllReduceTime(double bytes, int devices, const CommModel& comm) {
  ValidateCommModel(comm);
  if (!NonNegativeFinite(bytes)) {
    throw UsageError(fmt::format("gradient bytes must be >= 0 and finite, got {}", bytes));
  }
  if (devices < 1) throw UsageError(fmt::format("devices must be >= 1, got {}", devices));
  if (devices == 1) return 0;
  const int per_node =
      comm.devices_per_node == 0 ? devices : std::min(devices, comm.devices_per_node);
  const int nodes = (devices + per_node - 1) / per_node;
  if (comm.algorithm == AllReduceAlgorithm::kHierarchical) {
    if (nodes > 1) RequireBandwidth(comm.inter_node, "inter-node");
    return HierarchicalAllReduceTime(bytes, per_node, nodes, comm.intra_node, comm.inter_node);
  }
  // A flat ring or tree runs at the pace of the slowest link it crosses.
  Link link = comm.intra_node;
  if (nodes > 1) {
    RequireBandwidth(comm.inter_node, "inter-node");
    RequireBandwidth(comm.intra_node, "intra-node");
    link.bandwidth_bytes_per_s =
        std::min(comm.intra_node.bandwidth_bytes_per_s, comm.inter_node.bandwidth_bytes_per_s);
    link.latency_s = std::max(comm.intra_node.latency_s, comm.inter_node.latency_s);
  }
  return comm.algorithm == AllReduceAlgorithm::kRing ? RingAllReduceTime(bytes, devices, link)
                                                     : TreeAllReduceTime(bytes, devices, link);
}

double GradientBytes(double parameters, double bytes_per_parameter) {
  if (!NonNegativeFinite(parameters)) {
    throw UsageError(fmt::format("parameter count must be >= 0 and finite, got {}", parameters));
  }
  if (!PositiveFinite(bytes_per_parameter)) {
    throw UsageError(
        fmt::format("bytes per parameter must be > 0 and finite, got {}", bytes_per_parameter));
  }
  return parameters * bytes_per_parameter;
}

}  // namespace fitspeed
