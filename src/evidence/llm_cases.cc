// The published LLM training tables of data/measured/llm (README there) read
// into LlmCases: vTrain's single-node A100 iterations and MLPerf Training's
// GPT-3 and Llama-2-70B LoRA throughputs.
#include "fitspeed/evidence/llm_cases.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "evidence/csv_table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "io/text.h"

namespace fitspeed {

namespace {

// A whole number >= 1 that fits an int.
int PositiveIntLlmCases(const CsvTable& table, const CsvTable::Row& row, const char* name) {
  const int64_t value = table.PositiveInt(row, name);
  if (value > 1'000'000'000) {
    throw DataError(table.source, row.line, name, fmt::format("{} is out of range", value));
  }
  return static_cast<int>(value);
}

// ---- vTrain -----------------------------------------------------------------

constexpr const char* kVtrainGpus = "# GPUs";
constexpr const char* kVtrainGlobal = "global batch";
constexpr const char* kVtrainMicro = "micro batch";
constexpr const char* kVtrainHidden = "hidden size";
constexpr const char* kVtrainHeads = "attention heads";
constexpr const char* kVtrainLayers = "# layers";
constexpr const char* kVtrainSeq = "sequence length";
constexpr const char* kVtrainTp = "tensor parallelism";
constexpr const char* kVtrainDp = "data parallelism";
constexpr const char* kVtrainPp = "pipeline parallelism";
constexpr const char* kVtrainTime = "iteration time (ms)";

LlmCase ParseVtrainRowLlmCases(const CsvTable& table, const CsvTable::Row& row) {
  LlmCase c;
  c.publisher = "VIA-Research (vTrain)";
  c.source = table.source;
  c.line = row.line;
  // vTrain's config/validation/single/*.json: gpu_name A100, node_size 8, NVLink.
  c.system = "1 node of 8 A100 (NVLink)";
  c.benchmark = "vtrain-gpt";
  c.accelerator = "A100";
  // The memory size is not stated; the catalog's a100 is the 40 GB SXM4
  // (README: capacity does not bind for these <= 1.3B models).
  c.device = "a100";
  c.framework = "Megatron-DeepSpeed";
  c.precision = "fp16";  // Megatron-DeepSpeed's mixed precision, FP16 with loss scaling
  c.accelerators = PositiveIntLlmCases(table, row, kVtrainGpus);
  c.nodes = 1;
  c.global_batch = table.PositiveInt(row, kVtrainGlobal);
  c.micro_batch = PositiveIntLlmCases(table, row, kVtrainMicro);
  c.hidden = PositiveIntLlmCases(table, row, kVtrainHidden);
  c.heads = PositiveIntLlmCases(table, row, kVtrainHeads);
  c.kv_heads = c.heads;
  c.layers = PositiveIntLlmCases(table, row, kVtrainLayers);
  c.seq_len = PositiveIntLlmCases(table, row, kVtrainSeq);
  c.tp = PositiveIntLlmCases(table, row, kVtrainTp);
  c.dp = PositiveIntLlmCases(table, row, kVtrainDp);
  c.pp = PositiveIntLlmCases(table, row, kVtrainPp);
  c.cp = 1;
  c.iteration_time_s = table.Positive(row, kVtrainTime) / 1000.0;
  if (static_cast<int64_t>(c.tp) * c.pp * c.dp != c.accelerators) {
    throw DataError(
        table.source, row.line, kVtrainGpus,
        fmt::format("tensor x pipeline x data parallelism = {} x {} x {} = {}, not "
                    "the {} GPUs",
                    c.tp, c.pp, c.dp, static_cast<int64_t>(c.tp) * c.pp * c.dp, c.accelerators));
  }
  if (c.global_batch % (static_cast<int64_t>(c.micro_batch) * c.dp) != 0) {
    throw DataError(table.source, row.line, kVtrainGlobal,
                    fmt::format("{} is not a multiple of micro batch x data parallelism = "
                                "{} x {}: no whole gradient accumulation",
                                c.global_batch, c.micro_batch, c.dp));
  }
  return c;
}

// ---- MLPerf Training LLM ----------------------------------------------------

// The model each benchmark trains: GPT-3 175B (Brown et al. 2020, table 2.1)
// and Llama-2-70B (Touvron et al. 2023; its config.json: 80 layers, hidden
// 8192, 64 heads, 8 key-value heads).
struct MlperfModelLlmCases {
  const char* benchmark;
  int layers, hidden, heads, kv_heads, seq_len;
  bool lora;
};
constexpr MlperfModelLlmCases kMlperfModelsLlmCases[] = {
    {"gpt3", 96, 12288, 96, 96, 2048, false},
    {"llama2_70b_lora", 80, 8192, 64, 8, 8192, true},
};

const std::vector<std::string>& MlperfColumnsLlmCases() {
  static const std::vector<std::string> columns = {
      "round",        "submitter", "system",    "benchmark", "accelerator",  "n_accelerators",
      "n_nodes",      "framework", "precision", "seq_len",   "global_batch", "micro_batch",
      "tp",           "pp",        "vp",        "cp",        "dp",           "samples_per_s",
      "tokens_per_s", "method",    "n_logs"};
  return columns;
}

std::string PrecisionOfLlmCases(const CsvTable& table, const CsvTable::Row& row) {
  const std::string text = io::ToLower(table.Get(row, "precision"));
  if (text.empty()) return "";
  // "FP8", "FP8 (--fp8) + BF16", "INT8 AQT matmuls (bf16 fprop)": the first
  // word names the matrix products' precision.
  for (const char* name : {"fp8", "bf16", "fp16", "int8"}) {
    if (io::StartsWith(text, name)) return name;
  }
  throw DataError(table.source, row.line, "precision",
                  fmt::format("'{}' is none of FP8, BF16, FP16, INT8",
                              io::Excerpt(table.Get(row, "precision"))));
}

LlmCase ParseMlperfRowLlmCases(const CsvTable& table, const CsvTable::Row& row) {
  LlmCase c;
  c.source = table.source;
  c.line = row.line;
  c.round = table.Get(row, "round");
  c.publisher = table.Get(row, "submitter");
  c.system = table.Get(row, "system");
  c.framework = table.Get(row, "framework");
  for (const char* name : {"round", "submitter", "system"}) {
    if (table.Get(row, name).empty()) throw DataError(table.source, row.line, name, "is blank");
  }

  c.benchmark = table.Get(row, "benchmark");
  const MlperfModelLlmCases* model = nullptr;
  for (const MlperfModelLlmCases& m : kMlperfModelsLlmCases) {
    if (c.benchmark == m.benchmark) model = &m;
  }
  if (!model) {
    throw DataError(
        table.source, row.line, "benchmark",
        fmt::format("'{}' is neither gpt3 nor llama2_70b_lora", io::Excerpt(c.benchmark)));
  }
  c.layers = model->layers;
  c.hidden = model->hidden;
  c.heads = model->heads;
  c.kv_heads = model->kv_heads;
  c.lora = model->lora;

  c.accelerator = table.Get(row, "accelerator");
  // The catalog device that lists the table's accelerator name among its aliases.
  if (const std::optional<CatalogAlias> alias = FindCatalogAlias(c.accelerator)) {
    c.device = alias->device;
  }
  if (c.device.empty()) {
    throw DataError(table.source, row.line, "accelerator",
                    fmt::format("'{}' maps to no catalog device", io::Excerpt(c.accelerator)));
  }

  c.accelerators = PositiveIntLlmCases(table, row, "n_accelerators");
  c.nodes = PositiveIntLlmCases(table, row, "n_nodes");
  c.seq_len = PositiveIntLlmCases(table, row, "seq_len");
  if (c.seq_len != model->seq_len) {
    throw DataError(table.source, row.line, "seq_len",
                    fmt::format("{} for {}, whose sequences have {} tokens", c.seq_len, c.benchmark,
                                model->seq_len));
  }
  c.global_batch = table.PositiveInt(row, "global_batch");
  c.logs = PositiveIntLlmCases(table, row, "n_logs");

  // The split: all given, or all of tp, pp, cp, dp and micro_batch blank.
  const char* const split[] = {"micro_batch", "tp", "pp", "cp", "dp"};
  int blank = 0;
  for (const char* name : split) blank += table.Get(row, name).empty() ? 1 : 0;
  c.split_known = blank == 0;
  if (blank != 0 && blank != 5) {
    for (const char* name : split) {
      if (table.Get(row, name).empty()) {
        throw DataError(table.source, row.line, name,
                        "blank while other parallel settings are given: give all of "
                        "micro_batch, tp, pp, cp, dp or none");
      }
    }
  }
  if (c.split_known) {
    c.micro_batch = PositiveIntLlmCases(table, row, "micro_batch");
    c.tp = PositiveIntLlmCases(table, row, "tp");
    c.pp = PositiveIntLlmCases(table, row, "pp");
    c.cp = PositiveIntLlmCases(table, row, "cp");
    c.dp = PositiveIntLlmCases(table, row, "dp");
    c.vp = table.Get(row, "vp").empty() ? 0 : PositiveIntLlmCases(table, row, "vp");
    const int64_t product = static_cast<int64_t>(c.dp) * c.tp * c.pp * c.cp;
    if (product != c.accelerators) {
      throw DataError(table.source, row.line, "dp",
                      fmt::format("dp x tp x pp x cp = {} x {} x {} x {} = {}, not the {} "
                                  "n_accelerators",
                                  c.dp, c.tp, c.pp, c.cp, product, c.accelerators));
    }
  } else if (!table.Get(row, "vp").empty()) {
    throw DataError(table.source, row.line, "vp", "given while the split is blank");
  }
  c.precision = PrecisionOfLlmCases(table, row);

  c.tokens_per_s = table.Positive(row, "tokens_per_s");
  const double samples_per_s = table.Positive(row, "samples_per_s");
  if (std::abs(samples_per_s * c.seq_len / c.tokens_per_s - 1) > 1e-3) {
    throw DataError(table.source, row.line, "tokens_per_s",
                    fmt::format("{} is not samples_per_s x seq_len = {} x {} = {}", c.tokens_per_s,
                                samples_per_s, c.seq_len, samples_per_s * c.seq_len));
  }

  const std::string& method = table.Get(row, "method");
  if (io::StartsWith(method, "T1")) {
    c.includes_eval = false;  // eval_stop to the next eval_start: training only
  } else if (io::StartsWith(method, "T2")) {
    c.includes_eval = true;  // between eval_accuracy events
  } else {
    throw DataError(table.source, row.line, "method",
                    fmt::format("'{}' starts with neither T1 (training only) nor T2 "
                                "(eval_accuracy to eval_accuracy)",
                                io::Excerpt(method)));
  }
  c.duplicate = io::Contains(method, "DUPLICATE");
  return c;
}

// ---- The settings the runs' configurations record --------------------------

const std::vector<std::string>& SettingsColumnsLlmCases() {
  static const std::vector<std::string> columns = {"round",
                                                   "submitter",
                                                   "system",
                                                   "benchmark",
                                                   "recompute",
                                                   "recompute_setting",
                                                   "fp8_attention",
                                                   "zero",
                                                   "fp8_weights",
                                                   "evidence",
                                                   "source_repo",
                                                   "source_commit",
                                                   "source_paths",
                                                   "not_modeled",
                                                   "dropout",
                                                   "tp_comm_overlap",
                                                   "gradient_bytes",
                                                   "lora_dropout",
                                                   "activation_fp8_store"};
  return columns;
}

MlperfLlmSettings ParseSettingsRowLlmCases(const CsvTable& table, const CsvTable::Row& row) {
  MlperfLlmSettings s;
  s.source = table.source;
  s.line = row.line;
  for (const char* name : {"round", "submitter", "system", "benchmark", "recompute_setting",
                           "evidence", "source_repo", "source_commit", "source_paths"}) {
    if (table.Get(row, name).empty()) throw DataError(table.source, row.line, name, "is blank");
  }
  s.round = table.Get(row, "round");
  s.submitter = table.Get(row, "submitter");
  s.system = table.Get(row, "system");
  s.benchmark = table.Get(row, "benchmark");
  s.recompute = table.Get(row, "recompute");
  if (s.recompute != "none" && s.recompute != "selective" && s.recompute != "full" &&
      s.recompute != "selective-or-full") {
    throw DataError(table.source, row.line, "recompute",
                    fmt::format("'{}' is none of none, selective, full, selective-or-full",
                                io::Excerpt(s.recompute)));
  }
  s.recompute_setting = table.Get(row, "recompute_setting");
  if (!table.Get(row, "fp8_attention").empty()) s.fp8_attention = table.Bool(row, "fp8_attention");
  if (!table.Get(row, "dropout").empty()) s.dropout = table.Bool(row, "dropout");
  if (!table.Get(row, "tp_comm_overlap").empty())
    s.tp_comm_overlap = table.Bool(row, "tp_comm_overlap");
  if (!table.Get(row, "lora_dropout").empty()) s.lora_dropout = table.Bool(row, "lora_dropout");
  if (!table.Get(row, "activation_fp8_store").empty())
    s.activation_fp8_store = table.Bool(row, "activation_fp8_store");
  const std::string gradient_bytes = table.Get(row, "gradient_bytes");
  if (!gradient_bytes.empty()) {
    if (gradient_bytes != "2" && gradient_bytes != "4") {
      throw DataError(table.source, row.line, "gradient_bytes",
                      fmt::format("'{}' is none of 2, 4 or blank", io::Excerpt(gradient_bytes)));
    }
    s.gradient_bytes = gradient_bytes[0] - '0';
  }
  const std::string& zero = table.Get(row, "zero");
  if (zero != "0" && zero != "1" && zero != "2" && zero != "3") {
    throw DataError(table.source, row.line, "zero",
                    fmt::format("'{}' is none of 0, 1, 2, 3", io::Excerpt(zero)));
  }
  s.zero = zero[0] - '0';
  s.fp8_weights = !table.Get(row, "fp8_weights").empty() && table.Bool(row, "fp8_weights");
  s.evidence = table.Get(row, "evidence");
  s.source_repo = table.Get(row, "source_repo");
  s.source_commit = table.Get(row, "source_commit");
  const bool hex = s.source_commit.size() == 40 &&
                   s.source_commit.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex) {
    throw DataError(
        table.source, row.line, "source_commit",
        fmt::format("'{}' is not a commit (40 hexadecimal digits)", io::Excerpt(s.source_commit)));
  }
  s.source_paths = table.Get(row, "source_paths");
  s.not_modeled = table.Get(row, "not_modeled");
  return s;
}

}  // namespace

std::vector<MlperfLlmSettings> ReadMlperfLlmSettings(const std::string& path) {
  const CsvTable table = ReadCsvTable(path, SettingsColumnsLlmCases());
  std::vector<MlperfLlmSettings> settings;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int> seen;
  for (const CsvTable::Row& row : table.rows) {
    MlperfLlmSettings s = ParseSettingsRowLlmCases(table, row);
    const auto [it, added] =
        seen.emplace(std::tuple{s.round, s.submitter, s.system, s.benchmark}, s.line);
    if (!added) {
      throw DataError(table.source, row.line, "system",
                      fmt::format("{} {} {} {} is given on line {} already", s.round, s.submitter,
                                  io::Excerpt(s.system), s.benchmark, it->second));
    }
    settings.push_back(std::move(s));
  }
  return settings;
}

void AttachMlperfLlmSettings(std::vector<LlmCase>& cases,
                             const std::vector<MlperfLlmSettings>& settings) {
  for (const MlperfLlmSettings& s : settings) {
    bool found = false;
    for (LlmCase& c : cases) {
      if (c.round == s.round && c.publisher == s.submitter && c.system == s.system &&
          c.benchmark == s.benchmark) {
        c.settings = s;
        found = true;
      }
    }
    if (!found) {
      throw DataError(s.source, s.line, "system",
                      fmt::format("{} {} {} {} is no run of the throughput table", s.round,
                                  s.submitter, io::Excerpt(s.system), s.benchmark));
    }
  }
}

std::vector<LlmCase> ReadVtrainCases(const std::string& path) {
  const CsvTable table =
      ReadCsvTable(path, {kVtrainGpus, kVtrainGlobal, kVtrainMicro, kVtrainHidden, kVtrainHeads,
                          kVtrainLayers, kVtrainSeq, kVtrainTp, kVtrainDp, kVtrainPp, kVtrainTime});
  std::vector<LlmCase> cases;
  cases.reserve(table.rows.size());
  for (const CsvTable::Row& row : table.rows) cases.push_back(ParseVtrainRowLlmCases(table, row));
  return cases;
}

std::vector<LlmCase> ReadMlperfLlmCases(const std::string& path) {
  const CsvTable table = ReadCsvTable(path, MlperfColumnsLlmCases());
  std::vector<LlmCase> cases;
  cases.reserve(table.rows.size());
  for (const CsvTable::Row& row : table.rows) cases.push_back(ParseMlperfRowLlmCases(table, row));
  return cases;
}

std::vector<LlmCaseGroup> GroupLlmCases(const std::vector<LlmCase>& cases) {
  using Key = std::tuple<int, int, int, int, int, int64_t>;
  std::map<Key, LlmCaseGroup> groups;
  for (const LlmCase& c : cases) {
    LlmCaseGroup& g =
        groups[Key{c.layers, c.hidden, c.heads, c.seq_len, c.accelerators, c.global_batch}];
    if (g.cases.empty()) {
      g.layers = c.layers;
      g.hidden = c.hidden;
      g.heads = c.heads;
      g.seq_len = c.seq_len;
      g.accelerators = c.accelerators;
      g.global_batch = c.global_batch;
    }
    g.cases.push_back(c);
  }
  std::vector<LlmCaseGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  return out;
}

}  // namespace fitspeed
