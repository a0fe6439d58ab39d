// The published measurements fitspeed validates its device model against
// (data/measured/README.md): every row of those tables that a zoo network on a
// catalog device can model becomes a MeasuredCase, with what had to be
// assumed to read it in `note`.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/csv_table.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/error.h"
#include "fitspeed/evidence/validate.h"
#include "io/text.h"

namespace fitspeed {

namespace {

// ---- NVIDIA DeepLearningExamples: ResNet-50 v1.5, EfficientNet-B0 -----------

struct DleReadme {
  const char* path;
  const char* framework;
  const char* network;  // the zoo network; rows naming another Model= are skipped
};
// The three ResNet-50 v1.5 READMEs of the table (MXNet, PyTorch, TensorFlow 1)
// and PyTorch's EfficientNet README (its efficientnet-b0 rows). TensorFlow 2's
// EfficientNet v1 rows are not read: their per-GPU batch is not in the table
// and the configuration it comes from was not checked.
constexpr DleReadme kDleReadmes[] = {
    {"MxNet/Classification/RN50v1.5/README.md", "mxnet", "resnet50"},
    {"PyTorch/Classification/ConvNets/resnet50v1.5/README.md", "pytorch", "resnet50"},
    {"TensorFlow/Classification/ConvNets/resnet50v1.5/README.md", "tensorflow", "resnet50"},
    {"PyTorch/Classification/ConvNets/efficientnet/README.md", "pytorch", "efficientnet-b0"},
};

// Per-GPU batch of the tables whose CSV rows do not print it, as the README's
// benchmark commands (MXNet) or the ConvNets configs.yml (PyTorch) set it.
// `memory_32gb`: the system's V100s have 32 GB (configs.yml's DGX1V-32G).
std::optional<int64_t> DleStatedBatch(const std::string& network, const std::string& framework,
                                      const std::string& device, Precision precision,
                                      bool memory_32gb) {
  const bool mixed = precision == Precision::kMixed;
  if (network == "efficientnet-b0") {
    // PyTorch/Classification/ConvNets/configs.yml, models.efficientnet-b0:
    // DGXA100 AMP and TF32 batch_size 256; DGX1V-16G AMP 128, FP32 64;
    // DGX1V-32G AMP 256, FP32 128.
    if (framework != "pytorch") return std::nullopt;
    if (device == "a100" || device == "a100-80gb") return 256;
    if (device == "v100-sxm2") return (mixed ? 128 : 64) * (memory_32gb ? 2 : 1);
    return std::nullopt;
  }
  if (framework == "mxnet") {
    // MxNet/Classification/RN50v1.5/README.md, "Training performance" commands:
    // DGX A100 `benchmark.py -b 256` for TF32 and float16; DGX-1 `-b 192
    // --dtype float16` and `-b 96 --dtype float32`; DGX-2 `-b 256 --dtype
    // float16` and `-b 128 --dtype float32`.
    if (device == "a100" || device == "a100-80gb") return 256;
    if (device == "v100-sxm2") return mixed ? 192 : 96;
    if (device == "v100-sxm3-32gb") return mixed ? 256 : 128;
  }
  if (framework == "pytorch") {
    // PyTorch/Classification/ConvNets/configs.yml, models.resnet50: DGXA100 AMP
    // and TF32 batch_size 256; DGX1V AMP 256, FP32 112.
    if (device == "a100" || device == "a100-80gb") return 256;
    if (device == "v100-sxm2") return mixed ? 256 : 112;
  }
  return std::nullopt;
}

// "256" or "128 (FP32) / 256 (AMP)": the per-GPU batch for `precision`.
int64_t DleBatchFromRaw(const std::string& raw, Precision precision, const CsvTable& table,
                        const CsvTable::Row& row) {
  const char* field = "batch_size_per_gpu_raw";
  for (const std::string& part : io::Split(raw, '/')) {
    std::string_view rest;
    const auto value = io::LeadingDouble(part, &rest);
    if (!value || !(*value >= 1) || *value != std::floor(*value)) {
      throw DataError(table.source, row.line, field,
                      fmt::format("expected a batch size, got '{}'", io::Excerpt(raw)));
    }
    const std::string tag = io::ToLower(io::Trim(rest));
    const bool matches =
        tag.empty() ||
        (precision == Precision::kMixed ? tag == "(amp)" : tag == "(fp32)" || tag == "(tf32)");
    if (matches) return static_cast<int64_t>(*value);
  }
  throw DataError(
      table.source, row.line, field,
      fmt::format("no batch for precision {} in '{}'", PrecisionName(precision), io::Excerpt(raw)));
}

// The catalog device of a DLE table's system section, with how it was
// matched; nullopt for a system the catalog lacks (DGX-2H: 450 W V100s at a
// higher clock).
struct DleDevice {
  std::string device;
  std::string note;
};
std::optional<DleDevice> DleSystemDevice(const std::string& system) {
  if (io::Contains(system, "A100")) {
    if (io::Contains(system, "80G")) return DleDevice{"a100-80gb", "A100 80GB = catalog a100-80gb"};
    return DleDevice{"a100", "DGX A100 40GB = catalog a100"};
  }
  if (io::Contains(system, "DGX-1")) {
    return DleDevice{"v100-sxm2",
                     "DGX-1 V100 SXM2 = catalog v100-sxm2 (16 GB modeled for 32 GB parts)"};
  }
  if (io::Contains(system, "DGX-2 (")) {
    return DleDevice{"v100-sxm3-32gb", "DGX-2 V100 SXM3 32GB = catalog v100-sxm3-32gb"};
  }
  return std::nullopt;
}

// The precision of a DLE throughput column ("Throughput - mixed precision",
// "Throughput - TF32", "Throughput - FP32 + XLA"); nullopt for speed-up and
// scaling columns.
std::optional<Precision> DleColumnPrecision(const std::string& column_name) {
  const std::string column = io::ToLower(column_name);
  if (io::Contains(column, "mixed") || io::Contains(column, "amp")) return Precision::kMixed;
  if (io::Contains(column, "tf32")) return Precision::kTf32;
  if (io::Contains(column, "fp32")) return Precision::kFp32;
  return std::nullopt;
}

void AddDleCases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t = ReadCsvTable(
      path, {"readme_path", "system_section", "gpus_or_nodes", "batch_size_per_gpu_raw",
             "other_columns", "throughput_column", "throughput_numeric"});
  for (const CsvTable::Row& row : t.rows) {
    const DleReadme* readme = nullptr;
    for (const DleReadme& r : kDleReadmes) {
      if (t.Get(row, "readme_path") == r.path) readme = &r;
    }
    if (!readme) continue;
    // "Model=efficientnet-b4" and the like: a row of another network of the README.
    const std::string& other = t.Get(row, "other_columns");
    const size_t model_at = other.find("Model=");
    if (model_at != std::string::npos) {
      const std::string model(io::Trim(std::string_view(other).substr(model_at + 6)));
      if (model != readme->network) continue;
    }
    const std::string& system = t.Get(row, "system_section");
    const std::optional<DleDevice> matched = DleSystemDevice(system);
    if (!matched) continue;
    const std::string& device = matched->device;
    const std::string system_note = matched->note + "; ";
    const std::string& gpus_text = t.Get(row, "gpus_or_nodes");
    if (!io::StartsWith(gpus_text, "GPUs=")) {
      throw DataError(t.source, row.line, "gpus_or_nodes",
                      fmt::format("expected GPUs=N, got '{}'", io::Excerpt(gpus_text)));
    }
    const double gpus = io::ParsePositive(std::string_view(gpus_text).substr(5), t.source, row.line,
                                          "gpus_or_nodes");
    // One GPU and a full node only: 8 GPUs (DGX-1, DGX A100), 16 (DGX-2).
    const double node = device == "v100-sxm3-32gb" ? 16 : 8;
    if (gpus != 1 && gpus != node) continue;
    const std::string column = io::ToLower(t.Get(row, "throughput_column"));
    const std::optional<Precision> column_precision = DleColumnPrecision(column);
    if (!column_precision) continue;  // speedup and scaling columns
    const Precision precision = *column_precision;
    if (io::Trim(t.Get(row, "throughput_numeric")).empty()) continue;  // N/A as printed
    MeasuredCase c;
    c.network = readme->network;
    c.device = device;
    c.precision = precision;
    c.devices = static_cast<int>(gpus);
    c.throughput_sps = t.Positive(row, "throughput_numeric");
    c.framework = readme->framework;
    c.source = path;
    c.line = row.line;
    const std::string& raw = t.Get(row, "batch_size_per_gpu_raw");
    int64_t per_gpu = 0;
    std::string batch_note;
    if (!io::Trim(raw).empty()) {
      per_gpu = DleBatchFromRaw(raw, precision, t, row);
      batch_note = "per-GPU batch as printed in the table";
    } else if (const auto stated = DleStatedBatch(c.network, c.framework, device, precision,
                                                  io::Contains(system, "32G"))) {
      per_gpu = *stated;
      batch_note = c.framework == "mxnet"
                       ? std::string("per-GPU batch from the README's benchmark.py -b command") +
                             (device == "a100-80gb" ? " (the 80GB table's batch is assumed "
                                                      "unchanged from the 40GB-era command)"
                                                    : "")
                       : fmt::format("per-GPU batch from ConvNets/configs.yml ({}, {})", c.network,
                                     device != "v100-sxm2"         ? "DGXA100"
                                     : io::Contains(system, "32G") ? "DGX1V-32G"
                                                                   : "DGX1V");

    } else {
      continue;
    }
    c.batch = per_gpu * c.devices;
    c.note = system_note + batch_note + "; images/s is the global throughput of all GPUs";
    if (c.network == "efficientnet-b0") {
      c.optimizer = Optimizer::kRmsprop;  // the README's default configuration
      c.note += "; RMSprop with momentum 0.9 (the README's optimizer)";
    }
    if (c.devices > 1) {
      c.note +=
          " (weak scaling: per-GPU batch fixed); all-reduce modeled as a ring over "
          "NVLink (NVSwitch on the DGX-2) without overlap with the backward pass";
    }
    // Activation layouts as the repository runs them: AMP in NHWC, FP32 and
    // TF32 in NCHW (PyTorch ConvNets/configs.yml sets memory_format: nhwc for
    // AMP only; the MXNet runner passes --conv-layout NHWC for float16 only;
    // the TensorFlow graph is built NCHW and TensorFlow's layout optimizer
    // moves FP16 convolutions to NHWC, not TF32 ones with FP32 backprop).
    c.layout = precision == Precision::kMixed ? ActivationLayout::kNhwc : ActivationLayout::kNchw;
    c.note += precision == Precision::kMixed
                  ? "; NHWC activations (AMP runs channels-last)"
                  : "; NCHW activations (the repository's FP32/TF32 layout)";
    if (io::Contains(column, "xla")) c.note += "; TensorFlow with XLA";
    if (c.framework == "mxnet" && precision == Precision::kMixed) {
      // The README's runner passes --fuse-bn-relu 1 --fuse-bn-add-relu 1 for
      // float16 (cuDNN's fused batch norm + ReLU and + add + ReLU kernels).
      c.fusion = ElementwiseFusion::kBatchNormReluAdd;
      c.note +=
          "; MXNet float16 runs fuse batch norm with ReLU and add (runner: --fuse-bn-relu 1 "
          "--fuse-bn-add-relu 1)";
    }
    if (c.framework == "mxnet") c.note += "; MXNet Total IPS includes data loading";
    cases.push_back(std::move(c));
  }
}

// ---- NVIDIA DeepLearningExamples: BERT-large (TensorFlow 1) -----------------

// "16 , 8": the README's "mixed precision, FP32" (or TF32) pair, the value for
// `precision`.
int64_t DlePairValue(const std::string& text, Precision precision, const CsvTable& table,
                     const CsvTable::Row& row, const std::string& field) {
  const std::vector<std::string> parts = io::Split(text, ',');
  if (parts.size() != 2) {
    throw DataError(
        table.source, row.line, field,
        fmt::format("expected 'mixed, fp32' (two numbers), got '{}'", io::Excerpt(text)));
  }
  const std::string& part = parts[precision == Precision::kMixed ? 0 : 1];
  const double value = io::ParsePositive(io::Trim(part), table.source, row.line, field);
  if (value != std::floor(value) || value > 1e9) {
    throw DataError(table.source, row.line, field,
                    fmt::format("expected a whole number, got '{}'", io::Excerpt(part)));
  }
  return static_cast<int64_t>(value);
}

// TensorFlow/LanguageModeling/BERT/README.md: BERT-large pre-training
// (run_pretraining_lamb.sh, phase 1 at 128 tokens and phase 2 at 512, LAMB,
// gradient accumulation) and SQuAD v1.1 fine-tuning (run_squad.sh, 384
// tokens, Adam), on one GPU and on a whole node; multi-node rows
// ("Num Nodes=") are not read (links between nodes are not calibrated).
void AddDleBertCases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t = ReadCsvTable(
      path, {"readme_path", "system_section", "subsection", "gpus_or_nodes",
             "batch_size_per_gpu_raw", "other_columns", "throughput_column", "throughput_numeric"});
  for (const CsvTable::Row& row : t.rows) {
    if (t.Get(row, "readme_path") != "TensorFlow/LanguageModeling/BERT/README.md") continue;
    const std::string& section = t.Get(row, "subsection");
    const bool pretraining = io::StartsWith(section, "Pre-training");
    const bool squad = io::StartsWith(section, "Fine-tuning training performance for SQuAD");
    if (!pretraining && !squad) continue;
    const std::string& gpus_text = t.Get(row, "gpus_or_nodes");
    if (!io::StartsWith(gpus_text, "GPUs=")) continue;  // Num Nodes=: between nodes
    const std::optional<DleDevice> matched = DleSystemDevice(t.Get(row, "system_section"));
    if (!matched) continue;
    const std::string& device = matched->device;
    const std::string& system_note = matched->note;
    const double gpus = io::ParsePositive(std::string_view(gpus_text).substr(5), t.source, row.line,
                                          "gpus_or_nodes");
    const double node = device == "v100-sxm3-32gb" ? 16 : 8;
    if (gpus != 1 && gpus != node) continue;  // one GPU and a whole node, as for the CNNs
    const std::optional<Precision> column_precision =
        DleColumnPrecision(t.Get(row, "throughput_column"));
    if (!column_precision) continue;  // speedup and scaling columns
    const Precision precision = *column_precision;
    if (io::Trim(t.Get(row, "throughput_numeric")).empty()) continue;  // N/A as printed
    MeasuredCase c;
    c.network = "bert-large";
    c.device = device;
    c.precision = precision;
    c.devices = static_cast<int>(gpus);
    c.throughput_sps = t.Positive(row, "throughput_numeric");
    c.framework = "tensorflow";
    c.source = path;
    c.line = row.line;
    c.optimizer = Optimizer::kAdam;
    const int64_t per_gpu = DlePairValue(t.Get(row, "batch_size_per_gpu_raw"), precision, t, row,
                                         "batch_size_per_gpu_raw");
    c.batch = per_gpu * c.devices;
    c.note = system_note + "; sequences/s of all GPUs, per-GPU batch as printed";
    if (squad) {
      // run_squad.sh: max_seq_length 384. The span head (2 logits per token)
      // is modeled by the zoo's pre-training heads: 1.5% more training FLOPs.
      c.seq_len = 384;
      c.note +=
          "; SQuAD fine-tuning at 384 tokens (run_squad.sh), Adam; the span head is modeled "
          "by the pre-training heads (1.5% more FLOPs)";
    } else {
      // "Sequence Length=128;Gradient Accumulation: mixed precision,
      // FP32=1024 , 8192;Global Batch Size=65536"
      int64_t seq_len = 0, accumulation = 0, global = 0;
      for (const std::string& item : io::Split(t.Get(row, "other_columns"), ';')) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        const std::string key(io::Trim(std::string_view(item).substr(0, eq)));
        const std::string value(io::Trim(std::string_view(item).substr(eq + 1)));
        if (key == "Sequence Length") {
          seq_len = static_cast<int64_t>(
              io::ParsePositive(value, t.source, row.line, "other_columns: Sequence Length"));
        } else if (io::StartsWith(key, "Gradient Accumulation")) {
          accumulation =
              DlePairValue(value, precision, t, row, "other_columns: Gradient Accumulation");
        } else if (key == "Global Batch Size") {
          global = static_cast<int64_t>(
              io::ParsePositive(value, t.source, row.line, "other_columns: Global Batch Size"));
        }
      }
      if (seq_len == 0 || accumulation == 0 || global == 0) {
        throw DataError(t.source, row.line, "other_columns",
                        "expected Sequence Length, Gradient Accumulation and Global Batch Size");
      }
      // The DGX-2 FP32 rows print accumulations whose product with the batch
      // is not the global batch (32 x 8192 at 128 tokens on one GPU, not
      // 65536): the row contradicts itself and is not read.
      if (accumulation * c.batch != global) continue;
      c.seq_len = seq_len;
      c.accumulation = static_cast<int>(accumulation);
      c.note += fmt::format(
          "; pre-training at {} tokens, {} micro-batches accumulated per step (global batch "
          "{}); LAMB modeled as Adam (the same moments, plus a norm per layer)",
          seq_len, accumulation, global);
    }
    if (c.devices > 1) {
      c.note +=
          " (weak scaling: per-GPU batch fixed); all-reduce modeled as a ring over NVLink "
          "(NVSwitch on the DGX-2) without overlap with the backward pass";
    }
    c.note += "; TensorFlow 20.06 NGC container";
    cases.push_back(std::move(c));
  }
}

// ---- Pollux T4 ---------------------------------------------------------------

void AddPolluxCases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t = ReadCsvTable(path, {"model", "placement", "local_bsz", "step_time"});
  // Pollux's trace names: imagenet = ResNet-50/ImageNet, cifar10 = ResNet-18/CIFAR-10,
  // bert = BERT-base fine-tuned on SQuAD at 384 tokens (data/measured/README.md).
  const std::map<std::string, std::string> networks = {
      {"imagenet", "resnet50"}, {"cifar10", "resnet18-cifar"}, {"bert", "bert-base"}};
  for (const CsvTable::Row& row : t.rows) {
    const auto network = networks.find(t.Get(row, "model"));
    if (network == networks.end()) continue;
    if (t.PositiveInt(row, "placement") != 1) continue;  // single GPU only
    MeasuredCase c;
    c.network = network->second;
    c.device = "t4";
    // The artifact's ImageNet script (benchmark/models/imagenet/main.py)
    // wraps the model in apex's amp.initialize (default opt_level O1:
    // convolutions and GEMMs in FP16, the list of FP32 ops autocast took
    // over) with NCHW activations; the CIFAR-10 and SQuAD scripts run FP32.
    c.precision = c.network == "resnet50" ? Precision::kMixed : Precision::kFp32;
    c.devices = 1;
    c.batch = t.PositiveInt(row, "local_bsz");
    c.throughput_sps = static_cast<double>(c.batch) / t.Positive(row, "step_time");
    c.framework = "pytorch";
    c.source = path;
    c.line = row.line;
    c.note = c.network == "resnet50"
                 ? "throughput = local_bsz / step_time at placement 1; mixed precision, NCHW: "
                   "the artifact's ImageNet script calls apex amp.initialize (opt_level O1)"
                 : "throughput = local_bsz / step_time at placement 1; FP32 (the artifact's "
                   "script uses no AMP)";
    if (c.network == "bert-base") {
      // The artifact's BERT job fine-tunes on SQuAD (max_seq_length 384) with
      // AdamW; its span head (2 logits per token) is modeled by the zoo's
      // pre-training heads (3.8% more training FLOPs at 384 tokens).
      c.seq_len = 384;
      c.optimizer = Optimizer::kAdam;
      c.note +=
          "; SQuAD fine-tuning at 384 tokens, AdamW modeled as Adam, the span head by the "
          "pre-training heads (3.8% more FLOPs)";
    }
    cases.push_back(std::move(c));
  }
}

// ---- koshian2 Colab TPU / GPU WideResNet -------------------------------------

void AddKoshian2Cases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t =
      ReadCsvTable(path, {"device", "batch_size", "use_validation", "use_augmentation",
                          "from_storage", "num_workers", "epoch", "epoch_time_s"});
  // CIFAR-100 training set (data/measured/README.md).
  constexpr double kSamplesPerEpoch = 50000;
  struct Series {
    std::string device;
    int64_t batch = 0;
    int first_line = 0;  // line of epoch 2
    double sum_s = 0;
    int epochs = 0;
    int last_line = 0;
  };
  std::vector<Series> series;
  for (const CsvTable::Row& row : t.rows) {
    // The in-memory, no-validation, no-augmentation series: model.fit over all
    // 50,000 samples (ceil(50000/b) steps, last batch partial).
    const bool validation = t.Bool(row, "use_validation");
    const bool augmentation = t.Bool(row, "use_augmentation");
    const bool storage = t.Bool(row, "from_storage");
    if (validation || augmentation || storage) continue;
    const int64_t epoch = t.PositiveInt(row, "epoch");
    const double epoch_s = t.Positive(row, "epoch_time_s");
    if (epoch < 2 || epoch > 20) continue;  // epoch 1 includes graph compilation
    const std::string& device = t.Get(row, "device");
    if (device != "tpu" && device != "gpu") {
      throw DataError(t.source, row.line, "device",
                      fmt::format("expected tpu or gpu, got '{}'", io::Excerpt(device)));
    }
    const int64_t batch = t.PositiveInt(row, "batch_size");
    Series* s = nullptr;
    for (Series& candidate : series) {
      if (candidate.device == device && candidate.batch == batch) s = &candidate;
    }
    if (!s) {
      series.push_back({device, batch, row.line, 0, 0, 0});
      s = &series.back();
    }
    s->sum_s += epoch_s;
    s->epochs += 1;
    s->last_line = row.line;
  }
  for (const Series& s : series) {
    if (s.epochs != 19) {
      throw DataError(
          t.source, s.last_line, "epoch",
          fmt::format("{} batch {}: {} epochs in 2..20, expected 19", s.device, s.batch, s.epochs));
    }
    MeasuredCase c;
    c.network = "wrn-k7n4-7x7";
    c.device = s.device == "tpu" ? "tpu-v2-8" : "k80";
    c.precision = Precision::kFp32;
    c.devices = 1;
    c.batch = s.batch;
    c.throughput_sps = kSamplesPerEpoch / (s.sum_s / s.epochs);
    c.framework = "keras";
    c.layout = ActivationLayout::kNhwc;  // Keras' default data_format, channels_last
    c.optimizer = Optimizer::kAdam;
    c.source = path;
    c.line = s.first_line;
    c.note = fmt::format(
        "50000 / mean epoch time of epochs 2-20 (lines {}-{}), in memory, no validation, no "
        "augmentation: model.fit, ceil(50000/{}) = {} steps with a partial last batch; Adam "
        "(the source's optimizer)",
        s.first_line, s.last_line, s.batch,
        (static_cast<int64_t>(kSamplesPerEpoch) + s.batch - 1) / s.batch);
    c.note += s.device == "tpu"
                  ? "; batch is global (keras_to_tpu_model splits it over the 8 cores)"
                  : "; the Colab GPU is presumed a K80 (by date; the source does not name it)";
    cases.push_back(std::move(c));
  }
}

// ---- Paddle K40m AlexNet / GoogLeNet -----------------------------------------

void AddPaddleK40mCases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t = ReadCsvTable(
      path, {"table", "model", "framework", "num_gpus", "total_batch_size", "time_ms_per_batch"});
  const std::map<std::string, std::string> networks = {{"AlexNet", "alexnet"},
                                                       {"GoogleNet", "googlenet"}};
  for (const CsvTable::Row& row : t.rows) {
    const std::string& table = t.Get(row, "table");
    if (table != "single_gpu_image" && table != "multi_gpu_image") continue;
    const auto network = networks.find(t.Get(row, "model"));
    if (network == networks.end()) continue;                 // SmallNet: not in the zoo
    if (t.Get(row, "time_ms_per_batch") == "OOM") continue;  // out of memory as printed
    MeasuredCase c;
    c.network = network->second;
    c.device = "k40m";
    c.precision = Precision::kFp32;
    c.devices = static_cast<int>(t.PositiveInt(row, "num_gpus"));
    c.batch = t.PositiveInt(row, "total_batch_size");
    c.throughput_sps = static_cast<double>(c.batch) / (t.Positive(row, "time_ms_per_batch") / 1000);
    c.framework = io::ToLower(t.Get(row, "framework"));
    c.source = path;
    c.line = row.line;
    c.note = "throughput = total_batch_size / time per batch";
    if (c.framework == "caffe") c.note += "; `caffe time` has no weight update";
    if (c.devices > 1) c.note += "; all-reduce modeled as a ring over PCIe";
    cases.push_back(std::move(c));
  }
}

// ---- Paddle on two Xeon Gold 6148 -------------------------------------------

void AddPaddleXeonCases(const std::string& path, std::vector<MeasuredCase>& cases) {
  const CsvTable t =
      ReadCsvTable(path, {"model", "math_library", "batch_size", "train_images_per_second"});
  const std::map<std::string, std::string> networks = {{"VGG-19", "vgg19"},
                                                       {"ResNet-50", "resnet50"},
                                                       {"GoogLeNet", "googlenet"},
                                                       {"AlexNet", "alexnet"}};
  for (const CsvTable::Row& row : t.rows) {
    const auto network = networks.find(t.Get(row, "model"));
    if (network == networks.end()) continue;
    MeasuredCase c;
    c.network = network->second;
    c.device = "xeon-6148x2";
    c.precision = Precision::kFp32;
    c.devices = 1;
    c.batch = t.PositiveInt(row, "batch_size");
    c.throughput_sps = t.Positive(row, "train_images_per_second");
    c.framework = "paddlepaddle+" + io::ToLower(t.Get(row, "math_library"));
    c.source = path;
    c.line = row.line;
    c.note = "training images/s as printed, 2 sockets, one process";
    if (c.network == "resnet50") {
      c.note += "; Paddle's ResNet-50 is v1 (stride in the first 1x1 conv), modeled as v1.5";
    }
    cases.push_back(std::move(c));
  }
}

}  // namespace

std::vector<MeasuredCase> PublishedCases(const std::string& measured_dir) {
  std::vector<MeasuredCase> cases;
  const std::string dir = measured_dir.empty() ? "." : measured_dir;
  AddDleCases(dir + "/nvidia_dle_training_perf_tables.csv", cases);
  AddDleBertCases(dir + "/nvidia_dle_training_perf_tables.csv", cases);
  AddPolluxCases(dir + "/pollux_t4_single_node.csv", cases);
  AddKoshian2Cases(dir + "/koshian2_tpu_benchmark_main_per_epoch.csv", cases);
  AddPaddleK40mCases(dir + "/paddle_benchmark_k40m_gpu.csv", cases);
  AddPaddleXeonCases(dir + "/paddle_intel_xeon6148_cpu_train.csv", cases);
  return cases;
}

}  // namespace fitspeed
