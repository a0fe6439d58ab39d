// The LLM split model against vTrain's iterations (fitspeed/evidence/llm_validate.h).
#include "fitspeed/evidence/llm_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/llm/framework.h"

namespace fitspeed {

LlmCaseSetup SetupForVtrainCase(const LlmCase& c, const Device& device) {
  LlmCaseSetup s;
  TransformerConfig& m = s.model;
  m.name = fmt::format("gpt-l{}-h{}", c.layers, c.hidden);
  m.architecture = "gpt2";
  m.source = c.source;
  m.layers = c.layers;
  m.hidden = c.hidden;
  m.heads = c.heads;
  m.kv_heads = c.heads;
  m.head_dim = c.hidden / c.heads;
  m.ffn_hidden = 4 * static_cast<int64_t>(c.hidden);
  m.vocab = 50257;  // GPT-2's, as Megatron-DeepSpeed's GPT trains (README)
  m.positions = PositionEncoding::kLearned;
  m.max_positions = c.seq_len;
  m.norm = NormKind::kLayerNorm;
  m.feed_forward = FeedForwardKind::kPlain;
  m.attention_bias = true;
  m.feed_forward_bias = true;
  m.tied_embeddings = true;
  m.dropout = true;  // Megatron's --hidden-dropout and --attention-dropout default to 0.1
  s.cluster = MakeCluster(device, c.accelerators, 8);
  s.training.seq_len = c.seq_len;
  s.training.format = MatrixFormat::k16;
  s.training.flash_attention = false;  // Megatron-DeepSpeed of 2022: fused softmax, no flash
  s.training.gradient_bytes = 2;
  s.split.tp = c.tp;
  s.split.pp = c.pp;
  s.split.dp = c.dp;
  s.split.micro_batch = c.micro_batch;
  s.split.global_batch = c.global_batch;
  s.split.recompute = Recompute::kFull;  // use_checkpoint: true
  s.split.overlap_grad_reduce = false;   // use_gradient_bucket: false
  return s;
}

namespace {

double SquaredLogErrorLlmValidate(const std::vector<LlmCaseSetup>& setups,
                                  const std::vector<double>& measured, const LlmCalibration& cal) {
  double sum = 0;
  for (size_t i = 0; i < setups.size(); ++i) {
    const LlmCaseSetup& s = setups[i];
    const double p = ModelLlmStep(s.model, s.cluster, s.training, s.split, cal).step_s;
    const double e = std::log(measured[i] / p);
    sum += e * e;
  }
  return sum;
}

double MedianLlmValidate(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

LlmCalibration FitLlmCalibration(const std::vector<LlmCaseSetup>& setups,
                                 const std::vector<double>& measured) {
  if (setups.empty() || setups.size() != measured.size())
    throw UsageError("calibration needs one measured step time per setup");
  // Parameters in log space (the overhead as log(1 ms + x) so that 0 is reachable
  // from the start): coordinate search with step halving, from the catalog's
  // curves, 60 us dispatch and no overhead.
  LlmCalibration best;
  best.matrix_size_scale = 1.0;
  best.dispatch_s = 60e-6;
  best.step_overhead_s = 0;
  double f_best = SquaredLogErrorLlmValidate(setups, measured, best);
  double step = 0.8;
  auto get = [](const LlmCalibration& c, int k) {
    return k == 0   ? std::log(c.matrix_size_scale)
           : k == 1 ? std::log(c.dispatch_s)
                    : std::log(1e-3 + c.step_overhead_s);
  };
  auto set = [](LlmCalibration& c, int k, double v) {
    if (k == 0) c.matrix_size_scale = std::exp(v);
    if (k == 1) c.dispatch_s = std::exp(v);
    if (k == 2) c.step_overhead_s = std::max(0.0, std::exp(v) - 1e-3);
  };
  for (int round = 0; round < 40 && step > 1e-3; ++round) {
    bool improved = false;
    for (int k = 0; k < 3; ++k) {
      for (double dir : {+1.0, -1.0}) {
        LlmCalibration trial = best;
        set(trial, k, get(best, k) + dir * step);
        if (trial.matrix_size_scale > 1e3 || trial.matrix_size_scale < 1e-3) continue;
        const double f = SquaredLogErrorLlmValidate(setups, measured, trial);
        if (f < f_best) {
          f_best = f;
          best = trial;
          improved = true;
          break;
        }
      }
    }
    if (!improved) step *= 0.5;
  }
  best.memory_scale = 1.0;
  best.source = fmt::format(
      "fitted to {} vTrain Megatron-DeepSpeed iterations (A100, FP16; squared log error, "
      "coordinate "
      "search): matrix curve read at {:.3g}x the kernel size, host dispatch {:.3g} us per kernel, "
      "{:.3g} ms per step",
      setups.size(), best.matrix_size_scale, best.dispatch_s * 1e6, best.step_overhead_s * 1e3);
  return best;
}

LlmValidation ValidateLlmOnVtrain(const std::vector<LlmCase>& cases, const Device& a100,
                                  const std::string& generated_by,
                                  const ProgressCallback& progress) {
  LlmValidation v;
  std::vector<LlmCaseSetup> setups;
  std::vector<double> measured;
  std::vector<int> counts;
  for (const LlmCase& c : cases) {
    setups.push_back(SetupForVtrainCase(c, a100));
    measured.push_back(c.iteration_time_s);
    if (std::find(counts.begin(), counts.end(), c.accelerators) == counts.end())
      counts.push_back(c.accelerators);
  }
  std::sort(counts.begin(), counts.end());
  if (counts.size() < 2)
    throw UsageError("the vTrain validation needs rows of two GPU counts or more");
  v.rows.resize(cases.size());
  // The calibrations take the time: one per GPU count left out, one on every row.
  const auto fits = static_cast<int64_t>(counts.size()) + 1;
  int64_t fitted = 0;
  for (int g : counts) {
    ReportProgress(progress, "vTrain calibrations", fitted++, fits,
                   [&] { return fmt::format("{}-GPU rows held out", g); });
    std::vector<LlmCaseSetup> train;
    std::vector<double> train_measured;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].accelerators != g) {
        train.push_back(setups[i]);
        train_measured.push_back(measured[i]);
      }
    }
    const LlmCalibration cal = FitLlmCalibration(train, train_measured);
    v.folds.emplace_back(g, cal);
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].accelerators != g) continue;
      const LlmCaseSetup& s = setups[i];
      LlmValidation::Row& r = v.rows[i];
      r.c = cases[i];
      r.predicted_s = ModelLlmStep(s.model, s.cluster, s.training, s.split, cal).step_s;
      r.error = r.predicted_s / measured[i] - 1.0;
      // ln(measured / predicted throughput) = ln(predicted / measured step time).
      v.table.held_out.push_back({fmt::format("vtrain/{}-gpu fold", g),
                                  fmt::format("{}:{}", cases[i].source, cases[i].line),
                                  std::log(r.predicted_s / measured[i])});
    }
  }
  std::vector<double> abs_err;
  for (const auto& r : v.rows) abs_err.push_back(std::fabs(r.error));
  v.median_abs_error = MedianLlmValidate(abs_err);
  v.mean_abs_error = std::accumulate(abs_err.begin(), abs_err.end(), 0.0) / abs_err.size();
  v.max_abs_error = *std::max_element(abs_err.begin(), abs_err.end());
  // Ranking within each group (shape, GPU count, global batch).
  std::map<std::tuple<int, int, int, int, int64_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < v.rows.size(); ++i) {
    const LlmCase& c = v.rows[i].c;
    groups[{c.layers, c.hidden, c.seq_len, c.accelerators, c.global_batch}].push_back(i);
  }
  for (const auto& [key, idx] : groups) {
    (void)key;
    size_t fastest = idx[0];
    for (size_t i : idx)
      if (v.rows[i].c.iteration_time_s < v.rows[fastest].c.iteration_time_s) fastest = i;
    std::vector<size_t> order = idx;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return v.rows[a].predicted_s < v.rows[b].predicted_s; });
    const auto pos = std::find(order.begin(), order.end(), fastest) - order.begin();
    ++v.groups;
    if (pos == 0) ++v.top1;
    if (pos < 3) ++v.top3;
  }
  v.table.generated_by = generated_by;
  v.table.device = a100.name;
  ReportProgress(progress, "vTrain calibrations", fitted, fits,
                 [&] { return fmt::format("all {} rows", setups.size()); });
  v.table.calibration = FitLlmCalibration(setups, measured);
  ReportProgress(progress, "vTrain calibrations", fits, fits,
                 [&] { return fmt::format("all {} rows", setups.size()); });
  return v;
}

namespace {

struct BucketLlmValidate {
  std::vector<double> abs_err, signed_err;
};

void AddRowsLlmValidate(TextTable& t, const std::string& by,
                        const std::map<std::string, BucketLlmValidate>& b) {
  for (const auto& [name, e] : b) {
    t.AddRow({by, name, std::to_string(e.abs_err.size()),
              fmt::format("{:.1f}%", 100 * MedianLlmValidate(e.abs_err)),
              fmt::format("{:+.1f}%", 100 * MedianLlmValidate(e.signed_err)),
              fmt::format("{:.1f}%", 100 * *std::max_element(e.abs_err.begin(), e.abs_err.end()))});
  }
}

}  // namespace

void WriteLlmValidation(std::ostream& out, const LlmValidation& v, OutputFormat format) {
  std::map<std::string, BucketLlmValidate> by_pattern, by_mb, by_gpus;
  for (const auto& r : v.rows) {
    const LlmCase& c = r.c;
    std::string pattern;
    if (c.tp > 1) pattern += "tp";
    if (c.pp > 1) pattern += pattern.empty() ? "pp" : "+pp";
    if (c.dp > 1) pattern += pattern.empty() ? "dp" : "+dp";
    for (auto* m : {&by_pattern[pattern], &by_mb[fmt::format("micro-batch {}", c.micro_batch)],
                    &by_gpus[fmt::format("{} GPUs", c.accelerators)]}) {
      m->abs_err.push_back(std::fabs(r.error));
      m->signed_err.push_back(r.error);
    }
  }
  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["schema"] = "fitspeed.llm-validation/1";
    j["rows"] = v.rows.size();
    j["median_abs_error"] = v.median_abs_error;
    j["mean_abs_error"] = v.mean_abs_error;
    j["max_abs_error"] = v.max_abs_error;
    j["groups"] = v.groups;
    j["top1"] = v.top1;
    j["top3"] = v.top3;
    for (const auto& [g, cal] : v.folds)
      j["folds"].push_back({{"left_out_gpus", g},
                            {"matrix_size_scale", cal.matrix_size_scale},
                            {"dispatch_s", cal.dispatch_s},
                            {"step_overhead_s", cal.step_overhead_s}});
    out << j.dump(2) << "\n";
    return;
  }
  TextTable t({"by", "rows", "n", "median |err|", "median err", "max |err|"});
  std::map<std::string, BucketLlmValidate> all;
  for (const auto& r : v.rows) {
    all["all"].abs_err.push_back(std::fabs(r.error));
    all["all"].signed_err.push_back(r.error);
  }
  AddRowsLlmValidate(t, "overall", all);
  AddRowsLlmValidate(t, "split", by_pattern);
  AddRowsLlmValidate(t, "micro-batch", by_mb);
  AddRowsLlmValidate(t, "GPU count (fold)", by_gpus);
  if (format == OutputFormat::kCsv) {
    out << t.RenderCsv();
    return;
  }
  out << "vTrain, Megatron-DeepSpeed on A100 (1,440 iterations): every row predicted by the "
         "calibration "
         "fitted on the other two GPU counts\n";
  out << t.Render();
  out << fmt::format(
      "ranking: the measured fastest split is predicted first in {} of {} groups, in the top 3 in "
      "{} ({:.0f}%)\n",
      v.top1, v.groups, v.top3, 100.0 * v.top3 / std::max(1, v.groups));
  for (const auto& [g, cal] : v.folds)
    out << fmt::format(
        "fold without {} GPUs: matrix curve at x{:.3g} the size, dispatch {:.1f} us/kernel, {:.2f} "
        "ms/step\n",
        g, cal.matrix_size_scale, cal.dispatch_s * 1e6, cal.step_overhead_s * 1e3);
  out << "calibration compiled in (all rows): " << v.table.calibration.source << "\n";
}

LlmMlperfValidation ValidateLlmOnMlperf(const std::vector<LlmCase>& cases) {
  LlmMlperfValidation v;
  std::map<std::string, Device> devices;
  for (const LlmCase& c : cases) {
    if (c.duplicate || !c.split_known) continue;
    LlmMlperfValidation::Row row;
    row.c = c;
    row.settings = !c.settings                                    ? "assumed"
                   : c.settings->evidence.rfind("family", 0) == 0 ? "family"
                                                                  : "config";
    try {
      auto it = devices.find(c.device);
      if (it == devices.end()) it = devices.emplace(c.device, LoadDevice(c.device)).first;
      const Device& device = it->second;
      const bool lora = c.benchmark == "llama2_70b_lora";
      TransformerConfig model = LoadTransformer(lora ? "llama-2-70b" : "gpt3-175b");
      const LlmCluster cluster = MakeCluster(device, c.accelerators);
      LlmTraining tr;
      tr.seq_len = c.seq_len;
      tr.format = ParseMatrixFormat(c.precision);
      tr.lora_rank = lora ? 16 : 0;
      tr.flash_attention = true;
      tr.gradient_bytes = 4;
      // The framework the run names (its family, LlmFrameworkFamily): a user
      // modeling it would give that framework's profile.
      tr.framework = LlmFrameworkProfileOf(c);
      ApplyLlmFramework(tr, c.precision);
      LlmSplit s;
      s.tp = c.tp;
      s.pp = c.pp;
      s.vp = c.vp > 0 ? c.vp : 1;
      s.cp = c.cp > 0 ? c.cp : 1;
      s.dp = c.dp;
      s.micro_batch = c.micro_batch;
      s.global_batch = c.global_batch;
      s.sequence_parallel = c.tp > 1;
      s.recompute = Recompute::kSelective;
      const bool tpu = device.kind == "tpu";
      s.zero = lora ? 1 : (tpu ? 3 : 1);
      bool between = false;  // recorded between selective and full
      if (c.settings) {
        // What the run's configuration records.
        const MlperfLlmSettings& set = *c.settings;
        between = set.recompute == "selective-or-full";
        s.recompute = between ? Recompute::kSelective : ParseRecompute(set.recompute);
        s.zero = set.zero;
        if (set.dropout) model.dropout = *set.dropout;
        if (set.gradient_bytes) tr.gradient_bytes = *set.gradient_bytes;
        if (set.lora_dropout && lora) tr.lora_dropout = *set.lora_dropout;
        if (set.activation_fp8_store) tr.activation_fp8_store = *set.activation_fp8_store;
        // Transformer Engine's userbuffers overlap where the run turned it on
        // (it needs the sequence parallelism these runs have with tp > 1).
        if (set.tp_comm_overlap && *set.tp_comm_overlap) {
          if (s.sequence_parallel && s.tp > 1) {
            s.tp_comm_overlap = true;
          } else {
            row.notes.push_back("TP_COMM_OVERLAP recorded without tensor parallelism: no effect");
          }
        }
        if (set.fp8_weights) {
          if (tr.format == MatrixFormat::kFp8) {
            tr.fp8_weights = true;
          } else {
            row.notes.push_back(
                "FP8 weights recorded on a run the table does not list as FP8: not modeled");
          }
        }
        // One note per setting (" | " between them), so that each is listed once.
        for (size_t at = 0; at < set.not_modeled.size();) {
          const size_t end = std::min(set.not_modeled.find(" | ", at), set.not_modeled.size());
          row.notes.push_back("not modeled: " + set.not_modeled.substr(at, end - at));
          at = end + 3;
        }
      }
      if (s.dp * s.cp == 1) s.zero = 0;
      LlmStep step = ModelLlmStep(model, cluster, tr, s, LlmCalibrationFor(device));
      if ((!c.settings || between) && !step.memory.fits) {
        // Assumed settings, or recorded ones between selective and full: the
        // run fit in its memory, so where the split does not fit with
        // selective recomputation the run must have recomputed more (NeMo's
        // configs choose it per run): full is taken.
        s.recompute = Recompute::kFull;
        step = ModelLlmStep(model, cluster, tr, s, LlmCalibrationFor(device));
      }
      if (c.settings && !step.memory.fits) {
        row.notes.push_back(
            "the run fit with its recorded settings, the modeled memory does not (memory/cap > 1)");
      }
      row.modeled = true;
      row.predicted_tokens_per_s = step.tokens_per_s;
      row.error = step.tokens_per_s / c.tokens_per_s - 1.0;
      row.memory_fraction = step.memory.total / step.memory.capacity;
      row.recompute = RecomputeName(s.recompute);
    } catch (const Error& e) {
      row.reason = e.what();
    }
    v.rows.push_back(row);
  }
  std::map<std::string, std::vector<double>> abs_by, signed_by, abs_by_no_eval;
  std::vector<double> all;
  for (const auto& r : v.rows) {
    if (!r.modeled) continue;
    abs_by[r.c.publisher].push_back(std::fabs(r.error));
    signed_by[r.c.publisher].push_back(r.error);
    if (!r.c.includes_eval) abs_by_no_eval[r.c.publisher].push_back(std::fabs(r.error));
    all.push_back(std::fabs(r.error));
  }
  std::vector<double> per_publisher, per_publisher_no_eval;
  for (const auto& [name, errs] : abs_by) {
    LlmMlperfValidation::Publisher p;
    p.name = name;
    p.runs = static_cast<int>(errs.size());
    p.median_abs_error = MedianLlmValidate(errs);
    p.median_error = MedianLlmValidate(signed_by[name]);
    per_publisher.push_back(p.median_abs_error);
    v.publishers.push_back(p);
  }
  for (const auto& [name, errs] : abs_by_no_eval)
    per_publisher_no_eval.push_back(MedianLlmValidate(errs));
  v.publisher_median = MedianLlmValidate(per_publisher);
  v.publisher_median_no_eval = MedianLlmValidate(per_publisher_no_eval);
  v.run_median = MedianLlmValidate(all);
  return v;
}

void WriteLlmMlperfValidation(std::ostream& out, const LlmMlperfValidation& v,
                              OutputFormat format) {
  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["schema"] = "fitspeed.llm-mlperf-validation/1";
    j["publisher_median_abs_error"] = v.publisher_median;
    j["publisher_median_abs_error_without_eval"] = v.publisher_median_no_eval;
    j["run_median_abs_error"] = v.run_median;
    for (const auto& p : v.publishers)
      j["publishers"].push_back({{"publisher", p.name},
                                 {"runs", p.runs},
                                 {"median_abs_error", p.median_abs_error},
                                 {"median_error", p.median_error}});
    for (const auto& r : v.rows) {
      nlohmann::ordered_json row = {{"round", r.c.round},
                                    {"publisher", r.c.publisher},
                                    {"system", r.c.system},
                                    {"benchmark", r.c.benchmark},
                                    {"device", r.c.device},
                                    {"accelerators", r.c.accelerators},
                                    {"measured_tokens_per_s", r.c.tokens_per_s},
                                    {"includes_eval", r.c.includes_eval},
                                    {"modeled", r.modeled}};
      if (r.modeled) {
        row["predicted_tokens_per_s"] = r.predicted_tokens_per_s;
        row["error"] = r.error;
        row["memory_fraction"] = r.memory_fraction;
        row["recompute"] = r.recompute;
        row["settings"] = r.settings;
        row["notes"] = r.notes;
      } else {
        row["reason"] = r.reason;
      }
      j["rows"].push_back(row);
    }
    out << j.dump(2) << "\n";
    return;
  }
  TextTable t({"round", "publisher", "system", "benchmark", "device", "n", "tp.pp.vp.cp.dp mb",
               "precision", "measured tok/s", "predicted", "error", "memory/cap", "recompute",
               "settings"});
  for (const auto& r : v.rows) {
    const LlmCase& c = r.c;
    t.AddRow({c.round, c.publisher, c.system, c.benchmark, c.device, std::to_string(c.accelerators),
              fmt::format("{}.{}.{}.{}.{} {}", c.tp, c.pp, c.vp, c.cp, c.dp, c.micro_batch),
              c.precision,
              fmt::format("{:.4g}{}", c.tokens_per_s, c.includes_eval ? " (eval)" : ""),
              r.modeled ? fmt::format("{:.4g}", r.predicted_tokens_per_s) : std::string("-"),
              r.modeled ? fmt::format("{:+.1f}%", 100 * r.error) : "not modeled: " + r.reason,
              r.modeled ? fmt::format("{:.2f}", r.memory_fraction) : std::string("-"),
              r.modeled ? r.recompute : std::string("-"), r.settings});
  }
  if (format == OutputFormat::kCsv) {
    out << t.RenderCsv();
    return;
  }
  out << "MLPerf Training LLM (development data: three changes were made after its first score, "
         "docs/llm.md), distinct runs with a known split, modeled with vTrain's A100 calibration "
         "carried; settings: config (read from the run's configuration), family (from the "
         "configuration it derives from), assumed (llm/mlperf_llm_run_settings.csv):\n";
  out << t.Render();
  // Each note once, with the runs it belongs to.
  std::map<std::string, std::vector<std::string>> notes;
  std::vector<std::string> order;
  for (const auto& r : v.rows) {
    for (const std::string& n : r.notes) {
      if (notes.find(n) == notes.end()) order.push_back(n);
      notes[n].push_back(r.c.round + " " + r.c.publisher + " " + r.c.system);
    }
  }
  if (!order.empty()) out << "notes on the recorded settings:\n";
  for (const std::string& n : order) {
    std::string runs;
    for (const std::string& run : notes[n]) runs += (runs.empty() ? "" : ", ") + run;
    out << "- " << n << " [" << runs << "]\n";
  }
  TextTable p({"publisher", "runs", "median |err|", "median err"});
  for (const auto& x : v.publishers)
    p.AddRow({x.name, std::to_string(x.runs), fmt::format("{:.1f}%", 100 * x.median_abs_error),
              fmt::format("{:+.1f}%", 100 * x.median_error)});
  out << p.Render();
  out << fmt::format(
      "median over {} publishers of their median |error|: {:.1f}% ({:.1f}% leaving out the runs "
      "measured "
      "with evaluation in the time); over every modeled run: {:.1f}%\n",
      v.publishers.size(), 100 * v.publisher_median, 100 * v.publisher_median_no_eval,
      100 * v.run_median);
}

std::string LlmFrameworkProfileOf(const LlmCase& c) {
  const std::string family = LlmFrameworkFamily(c);
  if (family == "jax") return "maxtext";
  if (family == "deepspeed") return "deepspeed";
  // Habana's GPT-3 is Megatron-DeepSpeed; its LoRA runs Hugging Face's
  // modules on optimum-habana's fused HPU kernels (fused RMSNorm and rotary
  // embedding), closest to Megatron's fused profile.
  if (family == "habana") return c.benchmark == "gpt3" ? "megatron-deepspeed" : "megatron";
  if (family == "megatron-deepspeed") return "megatron-deepspeed";
  return "nemo";
}

std::string LlmFrameworkFamily(const LlmCase& c) {
  std::string f = c.framework + " " + c.system;
  std::transform(f.begin(), f.end(), f.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (c.benchmark == "vtrain-gpt") return "megatron-deepspeed";
  if (f.find("maxtext") != std::string::npos || f.find("pax") != std::string::npos) return "jax";
  if (f.find("deepspeed") != std::string::npos) return "deepspeed";
  if (c.device == "gaudi2" || c.device == "gaudi3") return "habana";
  return "nemo";
}

std::vector<LlmCalibrationTable::DevelopmentError> LlmDevelopmentErrors(
    const LlmValidation& vtrain, const LlmMlperfValidation& mlperf) {
  std::vector<LlmCalibrationTable::DevelopmentError> out;
  for (const LlmValidation::Row& r : vtrain.rows) {
    // error = predicted / measured step time - 1: ln(measured / predicted
    // throughput) = ln(1 + error).
    out.push_back({{r.c.publisher, fmt::format("{}:{}", r.c.source, r.c.line), std::log1p(r.error)},
                   r.c.device,
                   LlmFrameworkFamily(r.c)});
  }
  for (const LlmMlperfValidation::Row& r : mlperf.rows) {
    if (!r.modeled || r.c.includes_eval) continue;
    // error = predicted / measured throughput - 1.
    out.push_back(
        {{r.c.publisher, fmt::format("{}:{}", r.c.source, r.c.line), -std::log1p(r.error)},
         r.c.device,
         LlmFrameworkFamily(r.c)});
  }
  return out;
}

void WriteLlmLeaveOutCoverage(std::ostream& out,
                              const std::vector<LlmCalibrationTable::DevelopmentError>& development,
                              double level) {
  out << fmt::format(
      "{:.0f}% intervals for a setup unlike the development rows: each value's rows checked "
      "against the interval of the other values' rows (publishers weighted equally):\n",
      100 * level);
  out << "left out     values  rows  publishers  widened  held   median interval\n";
  for (const auto& [key, name] : {std::pair{LlmLeaveOut::kAccelerator, "accelerator"},
                                  std::pair{LlmLeaveOut::kFramework, "framework"},
                                  std::pair{LlmLeaveOut::kPublisher, "publisher"}}) {
    const double widen = LlmLeaveOutWidening(development, key, level);
    for (double w : {1.0, widen}) {
      const LlmLeaveOutCoverage c = LlmLeaveOutCoverageOf(development, key, level, w);
      out << fmt::format("{:<11} {:>7} {:>5} {:>11}    x{:.2f} {:>5.0f}%   x[{:.2f}, {:.2f}]\n",
                         name, c.values, c.rows, c.publishers, w, 100 * c.coverage, c.median_low,
                         c.median_high);
      if (widen == 1.0) break;
    }
  }
  out << "(widened: the smallest stretch about the median whose left-out intervals hold the level "
         "on these rows; the accelerator's is what `sweep llm` and `plan llm` apply to a device "
         "other than the calibration's)\n";
}

}  // namespace fitspeed
