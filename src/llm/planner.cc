// The planner (fitspeed/llm/planner.h).
#include "fitspeed/llm/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/llm/framework.h"
#include "llm/layer_kernels.h"

namespace fitspeed {

namespace {

std::vector<int64_t> DivisorsPlanner(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The candidates of one size: the fixed value alone, else those of `all`
// that pass `ok`.
template <typename Ok>
std::vector<int64_t> ChoicesPlanner(int64_t fixed, const std::vector<int64_t>& all, Ok ok) {
  std::vector<int64_t> out;
  if (fixed > 0) {
    out.push_back(fixed);
    return out;
  }
  for (int64_t v : all)
    if (ok(v)) out.push_back(v);
  return out;
}

// `layers` over `chunks` virtual stages as evenly as they go, the extra
// layers on the middle chunks (the first holds the embedding, the last the
// loss), as a pipeline layout.
std::string BalancedLayoutPlanner(int64_t layers, int64_t chunks) {
  std::vector<int64_t> per(static_cast<size_t>(chunks), layers / chunks);
  int64_t extra = layers % chunks;
  // Middle chunks first, outward from the centre's left, then the ends.
  for (int64_t i = 1; i + 1 < chunks && extra > 0; ++i, --extra) ++per[static_cast<size_t>(i)];
  for (size_t i = 0; i < per.size() && extra > 0; i += per.size() - 1, --extra) ++per[i];
  std::string out = "E";
  for (size_t i = 0; i < per.size(); ++i) {
    if (i > 0) out += "|";
    if (per[i] > 0) out += per[i] == 1 ? "t" : fmt::format("t*{}", per[i]);
  }
  return out + "L";
}

// Fastest first; among equals, the one needing less memory.
bool FasterPlanner(const LlmStep& a, const LlmStep& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  return a.memory.total < b.memory.total;
}

void KeepBestPlanner(std::vector<LlmStep>& kept, LlmStep step, size_t top) {
  if (kept.size() == top && !FasterPlanner(step, kept.back())) return;
  auto at = std::upper_bound(kept.begin(), kept.end(), step, FasterPlanner);
  kept.insert(at, std::move(step));
  if (kept.size() > top) kept.pop_back();
}

}  // namespace

LlmPlan PlanLlm(const TransformerConfig& m, const LlmCluster& c, const LlmPlanOptions& o,
                const LlmCalibration& cal) {
  const auto start = std::chrono::steady_clock::now();
  if (o.global_batch < 1) throw UsageError("global batch must be >= 1 sequence");
  if (o.top < 1) throw UsageError("--top must be >= 1");
  if (o.max_micro_batch < 1 || o.max_vp < 1)
    throw UsageError("max micro-batch and max vp must be >= 1");
  // The split is enumerated valid; what does not depend on it is checked once.
  ValidateTraining(m, c, o.training);
  // The splits the framework runs: what it lacks is never searched, and a
  // fixed size it lacks is refused as ModelLlmStep refuses it.
  const LlmFramework& fw = FindLlmFramework(o.training.framework);
  {
    LlmSplit probe;
    probe.tp = std::max(1, o.tp);
    probe.pp = std::max(1, o.pp);
    probe.vp = std::max(1, o.vp);
    probe.cp = std::max(1, o.cp);
    probe.ep = std::max(1, o.ep);
    probe.sequence_parallel = o.sequence_parallel.value_or(false);
    probe.zero = o.zero.value_or(0);  // every framework runs 0; a fixed level is checked
    fw.CheckSplit(probe);
  }
  if (o.shard_group < 0) throw UsageError("--fix shard: the shard group must be >= 1");
  if (o.shard_group > 0 && m.experts > 1)
    throw UsageError(
        "--fix shard on a mixture of experts: the experts' sharding over a shard group is not "
        "modeled");
  const LlmStepContext ctx = MakeStepContext(m, c, o.training, cal);
  const int64_t n = c.devices;
  const std::vector<int64_t> device_divisors = DivisorsPlanner(n);
  const bool moe = m.experts > 1;

  const auto tps = ChoicesPlanner(o.tp, device_divisors, [&](int64_t t) {
    return m.heads % t == 0 && (m.kv_heads % t == 0 || t % m.kv_heads == 0) && t <= c.domain &&
           (t == 1 || fw.tp);
  });
  std::vector<int64_t> cp_all;
  for (int64_t v = 1; v <= n; v *= 2) cp_all.push_back(v);
  const bool fixed_stages = !o.layout.empty() || o.first_stage_layers > 0 ||
                            o.last_stage_layers > 0 || o.embedding_as_layer || o.loss_as_layer;
  // The layers of each stage for (pp, vp): one layout ("" even) or none.
  const auto layouts = [&](int64_t pp, int64_t vp) -> std::vector<std::string> {
    const int ipp = static_cast<int>(pp), ivp = static_cast<int>(vp);
    if (!o.layout.empty()) {
      try {
        ParsePipelineLayout(m, ipp, ivp, o.layout);
        return {o.layout};
      } catch (const UsageError&) {
        return {};
      }
    }
    if (fixed_stages) {
      try {
        return {PipelineLayoutOf(m, ipp, ivp, o.first_stage_layers, o.last_stage_layers,
                                 o.embedding_as_layer, o.loss_as_layer)};
      } catch (const UsageError&) {
        return {};
      }
    }
    const int64_t chunks = pp * vp;
    if (m.layers % chunks == 0) return {""};
    if (chunks > m.layers) return {};
    if ((m.layers + 2) % chunks == 0) return {PipelineLayoutOf(m, ipp, ivp, 0, 0, true, true)};
    return {BalancedLayoutPlanner(m.layers, chunks)};
  };
  std::map<std::tuple<int, int, int, int, int64_t, bool>, ModelLayerTimes> cache;

  // The (tp, cp, pp) groups searched, listed first so that progress can say
  // how many there are.
  struct GroupPlanner {
    int64_t tp, cp, pp;
  };
  std::vector<GroupPlanner> groups;
  for (int64_t tp : tps) {
    if (n % tp != 0) continue;
    const auto cps = ChoicesPlanner(o.cp, cp_all, [&](int64_t v) {
      return (n / tp) % v == 0 &&
             (v == 1 || (fw.cp && o.training.flash_attention && o.training.seq_len % (2 * v) == 0));
    });
    for (int64_t cp : cps) {
      if ((n / tp) % cp != 0) continue;
      const int64_t rest = n / (tp * cp);
      const auto pps = ChoicesPlanner(o.pp, DivisorsPlanner(rest), [&](int64_t p) {
        return p <= m.layers && (p == 1 || fw.pp);
      });
      for (int64_t pp : pps) {
        if (rest % pp != 0) continue;
        const int64_t dp = rest / pp;
        if (o.dp > 0 && o.dp != dp) continue;
        if (o.global_batch % dp != 0) continue;
        groups.push_back({tp, cp, pp});
      }
    }
  }

  LlmPlan plan;
  const size_t top = static_cast<size_t>(o.top);
  const auto total = static_cast<int64_t>(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t tp = groups[g].tp, cp = groups[g].cp, pp = groups[g].pp;
    const int64_t dp = n / (tp * cp * pp);
    ReportProgress(o.progress, "planner", static_cast<int64_t>(g), total, [&] {
      return fmt::format("tp {}, cp {}, pp {}, dp {}: {} splits modeled so far", tp, cp, pp, dp,
                         plan.evaluated);
    });
    struct StagePlanPlanner {
      int64_t vp;
      std::string layout;
      std::vector<PipelineStage> stages;  // distinct
    };
    std::vector<StagePlanPlanner> stage_plans;
    {
      std::vector<int64_t> vps;
      if (o.vp > 0) {
        vps.push_back(o.vp);
      } else {
        vps.push_back(1);
        if (pp > 1 && fw.vp) {
          if (m.layers % pp == 0 && !fixed_stages) {
            for (int64_t v : DivisorsPlanner(m.layers / pp))
              if (v > 1 && v <= o.max_vp) vps.push_back(v);
          } else {
            for (int64_t v = 2; v <= o.max_vp && pp * v <= m.layers; ++v) vps.push_back(v);
          }
        }
      }
      for (int64_t vp : vps) {
        if (vp > 1 && pp < 2) continue;
        for (std::string& layout : layouts(pp, vp)) {
          LlmSplit probe;
          probe.pp = static_cast<int>(pp);
          probe.vp = static_cast<int>(vp);
          probe.layout = layout;
          stage_plans.push_back(
              {vp, std::move(layout), PipelineStagesOf(m, probe, ctx.mtp_layers, true)});
        }
      }
    }
    if (stage_plans.empty()) continue;
    std::vector<int64_t> eps{1};
    std::vector<int64_t> etps{tp};
    if (moe) {
      eps = ChoicesPlanner(o.ep, DivisorsPlanner(m.experts),
                           [&](int64_t e) { return (tp * dp * cp) % e == 0 && (e == 1 || fw.ep); });
      etps = ChoicesPlanner(o.etp, {1, tp}, [&](int64_t e) { return e == tp || tp > 1; });
      if (o.etp == 0 && tp == 1) etps = {1};
    } else if (o.ep > 1 || o.etp > 0) {
      continue;
    }
    const auto mbs = ChoicesPlanner(o.micro_batch, DivisorsPlanner(o.global_batch / dp),
                                    [&](int64_t b) { return b <= o.max_micro_batch; });
    for (int64_t etp : etps) {
      if (moe && m.ffn_hidden % etp != 0) continue;
      for (int64_t ep : eps) {
        if ((tp * dp * cp) % (ep * etp) != 0 || (moe && m.experts % ep != 0)) continue;
        for (int64_t mb : mbs) {
          if ((o.global_batch / dp) % mb != 0) continue;
          for (int spi = 0; spi < 2; ++spi) {
            const bool sp = spi == 1;
            if (sp && (tp == 1 || !fw.sequence_parallel)) continue;
            if (o.sequence_parallel && *o.sequence_parallel != sp) continue;
            LlmSplit s;
            s.tp = static_cast<int>(tp);
            s.cp = static_cast<int>(cp);
            s.ep = static_cast<int>(ep);
            s.etp = moe ? static_cast<int>(etp) : 0;
            s.dp = static_cast<int>(dp);
            s.pp = static_cast<int>(pp);
            s.micro_batch = mb;
            s.global_batch = o.global_batch;
            s.sequence_parallel = sp;
            s.overlap_grad_reduce = o.overlap_grad_reduce;
            s.overlap_moe_comm = o.overlap_moe_comm;
            s.tp_comm_overlap = o.tp_comm_overlap && sp && fw.tp_comm_overlap;
            s.recompute_modules = o.recompute_modules;
            const auto key = std::make_tuple(s.tp, s.cp, s.ep, s.etp, mb, sp);
            auto it = cache.find(key);
            if (it == cache.end())
              it = cache.emplace(key, TimeModelLayers(m, ctx, o.training, s)).first;
            for (const StagePlanPlanner& plan_stages : stage_plans) {
              s.vp = static_cast<int>(plan_stages.vp);
              s.layout = plan_stages.layout;
              if (!s.ScheduleRuns()) continue;
              for (int ri = 0; ri < 3; ++ri) {
                const Recompute rc = static_cast<Recompute>(ri);
                if (o.recompute && *o.recompute != rc) continue;
                // With flash attention there is no score tensor to recompute:
                // selective is the same split as none (same time, same memory).
                if (!o.recompute && rc == Recompute::kSelective && o.training.flash_attention &&
                    o.recompute_modules == kRecomputeCoreAttn)
                  continue;
                s.recompute = rc;
                for (int z = 0; z <= 3; ++z) {
                  if (o.zero && *o.zero != z) continue;
                  if (!fw.RunsZero(z, pp > 1)) continue;
                  if (z > 0 && dp * cp == 1) continue;  // nothing to shard over
                  if (o.shard_group > 0 && (z == 0 || (dp * cp) % o.shard_group != 0)) continue;
                  s.shard_group = o.shard_group;
                  s.zero = z;
                  LlmStep step = ModelLlmStepWith(m, c, o.training, s, cal, ctx, it->second,
                                                  plan_stages.stages, /*every_stage=*/false);
                  ++plan.evaluated;
                  if (step.memory.fits) {
                    ++plan.fitting;
                    KeepBestPlanner(plan.ranked, std::move(step), top);
                  } else {
                    KeepBestPlanner(plan.not_fitting, std::move(step), top);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  ReportProgress(o.progress, "planner", total, total,
                 [&] { return fmt::format("{} splits modeled", plan.evaluated); });
  if (plan.evaluated == 0)
    throw UsageError(
        "no split of " + std::to_string(n) +
        " devices satisfies the fixed sizes and the global batch (each of tp x pp x cp x dp must "
        "divide the devices, tp the heads, pp the layers, dp x micro-batch the global batch)");
  // Every stage's memory for the splits listed.
  for (std::vector<LlmStep>* list : {&plan.ranked, &plan.not_fitting}) {
    for (LlmStep& step : *list) {
      if (step.split.pp < 2) continue;
      const ModelLayerTimes layers = TimeModelLayers(m, ctx, o.training, step.split);
      step.memory = MemoryPerGpuWith(m, ctx, c, o.training, step.split, layers,
                                     PipelineStagesOf(m, step.split, ctx.mtp_layers, false));
    }
  }
  plan.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

LlmRunTotals LlmTotals(const LlmStep& step, const LlmCluster& c, double tokens,
                       std::optional<double> price, const PredictionInterval& interval) {
  if (!(tokens > 0) || !std::isfinite(tokens)) {
    throw UsageError(fmt::format("token budget {}: must be finite and > 0", tokens));
  }
  if (price && !(std::isfinite(*price) && *price >= 0)) {
    throw UsageError(fmt::format("price per device-hour {}: must be finite and >= 0", *price));
  }
  LlmRunTotals t;
  t.tokens = tokens;
  t.seconds = tokens / step.tokens_per_s;
  t.days = t.seconds / 86400.0;
  t.device_hours = t.seconds / 3600.0 * c.devices;
  if (price) t.cost = *price * t.device_hours;
  // Throughput lies in predicted x [low, high], so time in days / [high, low].
  t.days_low = interval.available ? t.days / interval.high_factor : t.days;
  t.days_high = interval.available ? t.days / interval.low_factor : t.days;
  return t;
}

void ApplyLlmPlanFix(const std::string& text, LlmPlanOptions& o) {
  if (text.empty()) return;
  std::map<std::string, std::string> given;  // key -> its item, to refuse a key given twice
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw UsageError(
          fmt::format("--fix '{}': expected key=value (keys tp, pp, vp, cp, ep, etp, dp, "
                      "mb, recompute, sp, zero, shard)",
                      item));
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (const auto [it, inserted] = given.emplace(key, item); !inserted) {
      throw UsageError(
          fmt::format("--fix: key '{}' given twice ('{}' and '{}')", key, it->second, item));
    }
    if (key == "recompute") {
      o.recompute = ParseRecompute(value);
      continue;
    }
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size()) {
      throw UsageError(fmt::format("--fix {}={}: not an integer", key, value));
    }
    auto size = [&](int64_t& field, int64_t max) {
      if (v < 1 || v > max)
        throw UsageError(fmt::format("--fix {}={}: must be in 1..{}", key, v, max));
      field = v;
    };
    int64_t n = 0;
    if (key == "mb") {
      size(o.micro_batch, int64_t{1} << 40);
    } else if (key == "sp") {
      if (v != 0 && v != 1) throw UsageError(fmt::format("--fix sp={}: expected 0 or 1", v));
      o.sequence_parallel = v == 1;
    } else if (key == "zero") {
      if (v < 0 || v > 3) throw UsageError(fmt::format("--fix zero={}: expected 0, 1, 2 or 3", v));
      o.zero = static_cast<int>(v);
    } else if (key == "shard") {
      size(n, 65536);
      o.shard_group = static_cast<int>(n);
    } else if (key == "tp" || key == "pp" || key == "vp" || key == "cp" || key == "ep" ||
               key == "etp" || key == "dp") {
      size(n, 65536);
      int& field = key == "tp"    ? o.tp
                   : key == "pp"  ? o.pp
                   : key == "vp"  ? o.vp
                   : key == "cp"  ? o.cp
                   : key == "ep"  ? o.ep
                   : key == "etp" ? o.etp
                                  : o.dp;
      field = static_cast<int>(n);
    } else {
      throw UsageError(
          fmt::format("--fix: unknown key '{}' (keys tp, pp, vp, cp, ep, etp, dp, mb, "
                      "recompute, sp, zero, shard)",
                      key));
    }
  }
}

}  // namespace fitspeed
