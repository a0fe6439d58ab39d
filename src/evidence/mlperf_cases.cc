// data/publishers.json and the MLPerf Training ResNet-50/BERT table read into
// MlperfCases (fitspeed/evidence/mlperf.h; data/measured/README.md).
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/input_file.h"
#include "evidence/csv_table.h"
#include "evidence/embedded_publishers.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/evidence/mlperf.h"
#include "io/text.h"

namespace fitspeed {

// ---- Publishers ----------------------------------------------------------------

const Publisher* PublisherTable::OfSubmitter(const std::string& submitter) const {
  for (const Publisher& p : publishers) {
    for (const std::string& s : p.mlperf_submitters) {
      if (s == submitter) return &p;
    }
  }
  return nullptr;
}

PublisherTable ReadPublishers(const std::string& path) {
  return ParsePublishers(ReadInputFile(path, "the publishers file"), path);
}

const PublisherTable& BuiltinPublishers() {
  static const PublisherTable table =
      ParsePublishers(EmbeddedPublishersJson(), "data/publishers.json (built in)");
  return table;
}

std::string PublisherTable::OfCaseFile(const std::string& file) const {
  const size_t slash = file.find_last_of('/');
  const std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
  const auto it = case_files.find(name);
  return it != case_files.end() ? it->second : name;
}

PublisherTable ParsePublishers(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path, 0, "", fmt::format("malformed JSON: {}", e.what()));
  }
  const auto string_at = [&](const nlohmann::json& object, const char* key,
                             const std::string& where) -> std::string {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
      throw DataError(path, 0, where + key, "missing or not a string");
    }
    return object[key].get<std::string>();
  };
  if (string_at(j, "schema", "") != "fitspeed.publishers/1") {
    throw DataError(path, 0, "schema",
                    fmt::format("'{}', not fitspeed.publishers/1", j["schema"].get<std::string>()));
  }
  PublisherTable table;
  table.rule = string_at(j, "rule", "");
  if (!j.contains("publishers") || !j["publishers"].is_array()) {
    throw DataError(path, 0, "publishers", "missing or not an array");
  }
  std::map<std::string, std::string> owner;  // submitter -> publisher
  for (size_t i = 0; i < j["publishers"].size(); ++i) {
    const nlohmann::json& entry = j["publishers"][i];
    const std::string where = fmt::format("publishers[{}].", i);
    Publisher p;
    p.name = string_at(entry, "publisher", where);
    p.split = string_at(entry, "split", where);
    if (p.split != "development" && p.split != "test") {
      throw DataError(path, 0, where + "split",
                      fmt::format("'{}' is neither development nor test", io::Excerpt(p.split)));
    }
    if (entry.contains("mlperf_submitters")) {
      const nlohmann::json& submitters = entry["mlperf_submitters"];
      if (!submitters.is_array()) {
        throw DataError(path, 0, where + "mlperf_submitters", "not an array");
      }
      for (const nlohmann::json& s : submitters) {
        if (!s.is_string()) throw DataError(path, 0, where + "mlperf_submitters", "not a string");
        const std::string name = s.get<std::string>();
        const auto [it, inserted] = owner.emplace(name, p.name);
        if (!inserted) {
          throw DataError(path, 0, where + "mlperf_submitters",
                          fmt::format("'{}' is listed by {} too", name, it->second));
        }
        p.mlperf_submitters.push_back(name);
      }
    }
    table.publishers.push_back(std::move(p));
  }
  if (j.contains("case_files")) {
    const nlohmann::json& files = j["case_files"];
    if (!files.is_array()) throw DataError(path, 0, "case_files", "not an array");
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string where = fmt::format("case_files[{}].", i);
      const std::string file = string_at(files[i], "file", where);
      const std::string publisher = string_at(files[i], "publisher", where);
      if (!table.case_files.emplace(file, publisher).second) {
        throw DataError(path, 0, where + "file",
                        fmt::format("'{}' is listed twice", io::Excerpt(file)));
      }
    }
  }
  return table;
}

// ---- The table -----------------------------------------------------------------

namespace {

// The tokens of a BERT sequence, the benchmark's (MLPerf Training rules).
constexpr int kBertSeqLenMlperf = 512;

// MLPerf BERT's training set (Wikipedia 2020-01-01; create_pretraining_data
// with max_seq_length 512, max_predictions_per_seq 76, masked_lm_prob 0.15)
// as NVIDIA's packing script reports it (mlcommons/training_results_v3.1,
// NVIDIA/benchmarks/bert/implementations/pytorch/input_preprocessing/
// packed_data/README.md): 156,726,829 sequences into 78,404,631 rows of 512
// tokens, 2.67e8 padding tokens added. Real tokens per sequence:
// (78,404,631 x 512 - 2.67e8) / 156,726,829 = 254.43 (the README's
// "original dataset used 4.04e10 padding tokens" gives 254.2; its upper
// bound on the speed-up, 2.012 = 512 / 254.5).
constexpr double kBertMeanTokensMlperf = 254.43;
// The mean square of the tokens is not published. Assumed: the
// maximum-entropy spread of lengths in 1..512 with that mean, nearly uniform
// (its mean is 49.7% of 512), E[L^2] = 4/3 E[L]^2 = 86,312 (lengths even over
// 0..2 x 254.43). Bounds: E[L]^2 = 64,735 (all equal) and E[L] x 512 =
// 130,268 (lengths of 0 and 512 only).
constexpr double kBertMeanSquareTokensMlperf =
    4.0 / 3.0 * kBertMeanTokensMlperf * kBertMeanTokensMlperf;
// Masked positions per sequence, where NVIDIA's BERT computes the masked-LM
// head: create_pretraining_data.py's min(76, max(1, round(0.15 x tokens))),
// 38.2 on average (0.15 x 254.43; the cap of 76 binds only above 506
// tokens), 38 rows.
constexpr int64_t kBertHeadPositionsMlperf = 38;

const std::vector<std::string>& ColumnsMlperf() {
  static const std::vector<std::string> columns = {"round",         "submitter",
                                                   "system",        "benchmark",
                                                   "accelerator",   "accelerators_per_node",
                                                   "n_nodes",       "n_accelerators",
                                                   "framework",     "global_batch",
                                                   "samples_per_s", "method",
                                                   "division",      "max_seq_len",
                                                   "bert_packing",  "bert_packing_evidence",
                                                   "n_ttt_success", "duplicate_of",
                                                   "flags"};
  return columns;
}

// A whole number >= 0 that fits an int.
int CountMlperf(const CsvTable& table, const CsvTable::Row& row, const char* name) {
  const double value = table.NonNegative(row, name);
  if (value != static_cast<double>(static_cast<int>(value)) || value > 1e9) {
    throw DataError(table.source, row.line, name,
                    fmt::format("expected a whole number, got {}", value));
  }
  return static_cast<int>(value);
}

// The sequences per 512-token row stated by bert_packing_evidence
// ("...; GBS/(d_batch*n_acc*grad_acc)=2 ..."), 1 when it states none.
int SequencesPerRowMlperf(const CsvTable& table, const CsvTable::Row& row) {
  static const std::regex ratio(R"(GBS/\(d_batch\*n_acc\*grad_acc\)=([0-9]+))");
  const std::string& evidence = table.Get(row, "bert_packing_evidence");
  std::smatch m;
  if (!std::regex_search(evidence, m, ratio)) return 1;
  const int n = std::stoi(m[1].str());
  if (n < 1 || n > 8) {
    throw DataError(table.source, row.line, "bert_packing_evidence",
                    fmt::format("GBS/(d_batch*n_acc*grad_acc) = {}, expected 1 to 8", n));
  }
  return n;
}

// The modeled case of a row whose accelerator the catalog has: the setup of
// the code the submitters ran (file comment of mlperf.h; docs/validation.md).
// Whether each catalog device of the table has FP8 units, loaded once per read.
using Fp8UnitsMlperf = std::map<std::string, bool>;

MeasuredCase ModeledCaseMlperf(const MlperfCase& c, Fp8UnitsMlperf& fp8_units) {
  MeasuredCase m;
  m.device = c.device;
  m.precision = Precision::kMixed;  // FP16/BF16 AMP: every closed ResNet-50 and BERT submission
  m.devices = c.accelerators;
  m.devices_per_node = c.accelerators_per_node;
  m.source = c.source;
  m.line = c.line;
  const std::string framework = io::ToLower(c.framework);
  const bool nvidia_code = c.device != "gaudi2" && c.device != "mi300x";
  if (c.benchmark == "resnet") {
    m.network = "resnet50";
    m.batch = c.global_batch;
    m.throughput_sps = c.samples_per_s;
    // LARS: momentum SGD with a per-layer trust ratio (one state per parameter).
    m.optimizer = Optimizer::kSgdMomentum;
    if (nvidia_code) {
      // NVIDIA's reference (MXNet, NHWC, DALI, cuDNN's fused BN-ReLU-add),
      // which every GPU submitter of ResNet-50 ran.
      m.framework = "mxnet";
      m.layout = ActivationLayout::kNhwc;
      m.fusion = ElementwiseFusion::kBatchNormReluAdd;
      m.note = "NVIDIA's MXNet ResNet-50: nhwc, fused bn-relu-add, LARS as momentum SGD";
    } else {
      m.framework = io::Contains(framework, "tensorflow") ? "tensorflow" : "pytorch";
      m.note = fmt::format(
          "Habana's {} ResNet-50: layout and fusion not stated (nchw, none), "
          "LARS as momentum SGD",
          m.framework);
    }
  } else {
    m.network = "bert-large";
    m.seq_len = kBertSeqLenMlperf;
    m.optimizer = Optimizer::kAdam;  // LAMB: Adam's two moments and a per-layer trust ratio
    m.framework = io::Contains(framework, "tensorflow") && !nvidia_code ? "tensorflow" : "pytorch";
    if (nvidia_code) {
      // NVIDIA's reference removes the padding (unpad=True, packed or not):
      // the dense layers run on the real tokens, the fused attention within
      // each sequence, the masked-LM head on the masked positions. A sample
      // is one sequence of the dataset's mean length; packing only groups
      // them into rows.
      m.batch = c.global_batch;
      m.throughput_sps = c.samples_per_s;
      m.mean_tokens = kBertMeanTokensMlperf;
      m.mean_square_tokens = kBertMeanSquareTokensMlperf;
      m.head_positions = kBertHeadPositionsMlperf;
      m.attention = AttentionKernel::kFused;  // NVIDIA's fused multi-head attention kernels
      // FP8: every packed configuration of NVIDIA's BERT found (config_*.sh of
      // mlcommons/training_results_v3.1 NVIDIA/.../v30-pytorch, v4.0 h200, and
      // the later rounds' NVIDIA and partner configs) passes
      // --use_transformer_engine2, "Enable FP8 layers" (run_pretraining.py):
      // te_layers.py runs the encoder's four dense products and its fused
      // attention in FP8. The unpacked configs do not (their logs print
      // use_transformer_engine2=False or lack the option). A device without
      // FP8 units (the packed A100 PCIe rows) runs 16-bit.
      auto units = fp8_units.find(c.device);
      if (units == fp8_units.end()) {
        units = fp8_units.emplace(c.device, LoadDevice(c.device).fp8_flops_per_s > 0).first;
      }
      const bool fp8 = io::StartsWith(c.packing, "packed") && units->second;
      if (fp8) m.precision = Precision::kFp8;
      // No autocast: run_pretraining.py casts the model to FP16 whole
      // (model.half() with distributed LAMB's FP32 master weights, or apex amp
      // opt_level O2), its layer norms apex's and Transformer Engine's fused
      // kernels reading and writing FP16.
      m.amp_ops = AmpOpList::kNone;
      m.note = fmt::format(
          "NVIDIA's PyTorch BERT: padding removed ({}), {} real tokens per sequence (the "
          "dataset's mean; mean square 4/3 x mean^2 assumed), masked-LM head on {} positions, "
          "fused attention, {}the model in FP16 whole (no autocast), LAMB as Adam",
          c.packing.empty() ? "packing not stated" : c.packing, kBertMeanTokensMlperf,
          kBertHeadPositionsMlperf,
          fp8 ? "FP8 dense layers and attention (packed: --use_transformer_engine2), " : "");
    } else {
      // The model runs rows of 512 tokens; a packed row holds sequences_per_row sequences.
      m.batch = c.global_batch / c.sequences_per_row;
      m.throughput_sps = c.samples_per_s / c.sequences_per_row;
      m.note = fmt::format(
          "{} BERT: attention unfused (not stated), LAMB as Adam, sequences "
          "padded to 512 tokens (packing not stated)",
          c.device == "gaudi2" ? "Habana's" : "tinygrad's");
    }
  }
  return m;
}

MlperfCase ParseRowMlperf(const CsvTable& table, const CsvTable::Row& row,
                          const PublisherTable& publishers, Fp8UnitsMlperf& fp8_units) {
  MlperfCase c;
  c.source = table.source;
  c.line = row.line;
  for (const char* name : {"round", "submitter", "system", "accelerator"}) {
    if (table.Get(row, name).empty()) throw DataError(table.source, row.line, name, "is blank");
  }
  c.round = table.Get(row, "round");
  c.submitter = table.Get(row, "submitter");
  const Publisher* publisher = publishers.OfSubmitter(c.submitter);
  if (!publisher) {
    throw DataError(table.source, row.line, "submitter",
                    fmt::format("'{}' is listed by no publisher (data/publishers.json, "
                                "mlperf_submitters)",
                                io::Excerpt(c.submitter)));
  }
  c.publisher = publisher->name;
  c.split = publisher->split;
  c.system = table.Get(row, "system");
  c.benchmark = table.Get(row, "benchmark");
  if (c.benchmark != "resnet" && c.benchmark != "bert") {
    throw DataError(table.source, row.line, "benchmark",
                    fmt::format("'{}' is neither resnet nor bert", io::Excerpt(c.benchmark)));
  }
  c.accelerator = table.Get(row, "accelerator");
  // The catalog device that lists the table's name among its aliases; the
  // others (H100 SXM 96 GB, A40, CPUs) are not modelable. The GeForce RTX
  // 4090 and Radeon RX 7900 XTX have catalog devices (rtx-4090, rx-7900-xtx)
  // but their MLPerf names are not their aliases: tinycorp ran them with
  // tinygrad, which ModeledCaseMlperf would take for NVIDIA's reference code
  // (docs/validation.md, "MLPerf Training").
  if (const std::optional<CatalogAlias> alias = FindCatalogAlias(c.accelerator)) {
    c.device = alias->device;
  }
  c.accelerators = CountMlperf(table, row, "n_accelerators");
  c.accelerators_per_node = CountMlperf(table, row, "accelerators_per_node");
  c.nodes = static_cast<int>(table.PositiveInt(row, "n_nodes"));
  if (c.accelerators != c.accelerators_per_node * c.nodes) {
    throw DataError(table.source, row.line, "n_accelerators",
                    fmt::format("{} is not accelerators_per_node x n_nodes = {} x {}",
                                c.accelerators, c.accelerators_per_node, c.nodes));
  }
  if (c.accelerators == 0 && !c.device.empty()) {
    throw DataError(table.source, row.line, "n_accelerators",
                    fmt::format("0 for an accelerator, {}", c.accelerator));
  }
  c.global_batch = table.PositiveInt(row, "global_batch");
  c.samples_per_s = table.Positive(row, "samples_per_s");
  c.method = table.Get(row, "method");
  c.framework = table.Get(row, "framework");
  c.packing = table.Get(row, "bert_packing");
  c.flags = table.Get(row, "flags");
  if (c.benchmark == "bert") {
    const std::string& seq = table.Get(row, "max_seq_len");
    if (!io::StartsWith(seq, std::to_string(kBertSeqLenMlperf))) {
      throw DataError(table.source, row.line, "max_seq_len",
                      fmt::format("'{}', not BERT's {}", io::Excerpt(seq), kBertSeqLenMlperf));
    }
    c.sequences_per_row = SequencesPerRowMlperf(table, row);
  }
  if (c.accelerators > 0 &&
      c.global_batch % (static_cast<int64_t>(c.sequences_per_row) * c.accelerators) != 0) {
    throw DataError(table.source, row.line, "global_batch",
                    fmt::format("{} is not a whole number of {}-sequence rows per accelerator "
                                "on {} accelerators",
                                c.global_batch, c.sequences_per_row, c.accelerators));
  }
  if (!c.device.empty()) c.measured = ModeledCaseMlperf(c, fp8_units);
  return c;
}

}  // namespace

MlperfTable ReadMlperfCases(const std::string& path, const PublisherTable& publishers) {
  const CsvTable table = ReadCsvTable(path, ColumnsMlperf());
  MlperfTable out;
  Fp8UnitsMlperf fp8_units;
  for (const CsvTable::Row& row : table.rows) {
    if (!table.Get(row, "duplicate_of").empty()) {
      ++out.left_out.duplicates;
      continue;
    }
    const std::string& division = table.Get(row, "division");
    if (division != "closed" && division != "open") {
      throw DataError(table.source, row.line, "division",
                      fmt::format("'{}' is neither closed nor open", io::Excerpt(division)));
    }
    const int successes = CountMlperf(table, row, "n_ttt_success");
    MlperfCase c = ParseRowMlperf(table, row, publishers, fp8_units);  // every kept row is checked
    if (division == "open") {
      ++out.left_out.open_division;
    } else if (successes == 0) {
      ++out.left_out.unsuccessful;
    } else {
      out.cases.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace fitspeed
