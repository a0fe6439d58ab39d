// Published cases read from data/measured, the % error and its summaries, in-
// and out-of-sample marking, cases that cannot be modeled, and the
// mixed-precision and host checks of fitspeed/evidence/validate.h.
#include "fitspeed/evidence/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/timing/host.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string MeasuredDirValidate() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured";
}

const std::vector<MeasuredCase>& Published() {
  static const std::vector<MeasuredCase> cases = PublishedCases(MeasuredDirValidate());
  return cases;
}

// The case read from `file` at `line` (the first one: a koshian2 case is read
// from many lines and names the first).
const MeasuredCase* At(const std::string& file, int line) {
  for (const MeasuredCase& c : Published()) {
    if (std::filesystem::path(c.source).filename() == file && c.line == line) return &c;
  }
  return nullptr;
}

const MeasuredCase* ByKey(const std::string& key, const std::string& framework) {
  for (const MeasuredCase& c : Published()) {
    if (CaseKey(c) == key && c.framework == framework) return &c;
  }
  return nullptr;
}

TEST(CaseKey, NamesNetworkDevicePrecisionDevicesAndBatch) {
  MeasuredCase c;
  c.network = "resnet50";
  c.device = "v100-sxm2";
  c.precision = Precision::kMixed;
  c.devices = 8;
  c.batch = 2048;
  EXPECT_EQ(CaseKey(c), "resnet50/v100-sxm2/mixed/x8/b2048");
}

TEST(PublishedCases, DleMxnetV100Fp32ReadsTheReadmeBatch) {
  // nvidia_dle_training_perf_tables.csv line 345: MxNet RN50v1.5, "Training
  // performance: NVIDIA DGX-1 (8x V100 16GB)", GPUs=1, "Throughput - FP32", 384;
  // the README's command runs FP32 with `benchmark.py -b 96`.
  const MeasuredCase* c = At("nvidia_dle_training_perf_tables.csv", 345);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "resnet50/v100-sxm2/fp32/x1/b96");
  EXPECT_DOUBLE_EQ(c->throughput_sps, 384);
  EXPECT_EQ(c->framework, "mxnet");
  EXPECT_THAT(c->note, HasSubstr("global throughput"));
}

TEST(PublishedCases, DleMxnetFloat16FusesBatchNormReluAndAddAsItsRunnerDoes) {
  // MxNet/Classification/RN50v1.5/runner: float16 adds --fuse-bn-relu 1
  // --fuse-bn-add-relu 1, float32 does not. Line 344: DGX-1, 1 GPU, mixed;
  // line 345 the same in FP32. TensorFlow's "+ XLA" rows (line 375) keep
  // every layer its own kernel: XLA's fusion was not modeled.
  const MeasuredCase* mixed = At("nvidia_dle_training_perf_tables.csv", 344);
  const MeasuredCase* fp32 = At("nvidia_dle_training_perf_tables.csv", 345);
  const MeasuredCase* xla = At("nvidia_dle_training_perf_tables.csv", 375);
  ASSERT_NE(mixed, nullptr);
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(xla, nullptr);
  EXPECT_EQ(mixed->fusion, ElementwiseFusion::kBatchNormReluAdd);
  EXPECT_THAT(mixed->note, HasSubstr("--fuse-bn-add-relu 1"));
  EXPECT_EQ(fp32->fusion, ElementwiseFusion::kNone);
  EXPECT_EQ(xla->framework, "tensorflow");
  EXPECT_EQ(xla->fusion, ElementwiseFusion::kNone);
  EXPECT_EQ(CaseModelOptions(*mixed, Optimizer::kSgdMomentum).fusion,
            ElementwiseFusion::kBatchNormReluAdd);
}

TEST(PublishedCases, DleEfficientNetB0BatchFromTheConvNetsConfigsPerSystem) {
  // PyTorch/Classification/ConvNets/configs.yml, models.efficientnet-b0:
  // DGX1V-16G FP32 batch 64, DGX1V-32G AMP 256, DGXA100 TF32 256.
  // Line 566: "NVIDIA DGX-1 (8x V100 16GB)", GPUs=1, Model=efficientnet-b0, FP32, 655 img/s.
  const MeasuredCase* v100 = At("nvidia_dle_training_perf_tables.csv", 566);
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(CaseKey(*v100), "efficientnet-b0/v100-sxm2/fp32/x1/b64");
  EXPECT_DOUBLE_EQ(v100->throughput_sps, 655);
  EXPECT_THAT(v100->note, HasSubstr("RMSprop"));
  // Line 585: "(8x V100 32GB)", GPUs=8, mixed precision, 8615 img/s: 8 x 256.
  const MeasuredCase* big = At("nvidia_dle_training_perf_tables.csv", 585);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(CaseKey(*big), "efficientnet-b0/v100-sxm2/mixed/x8/b2048");
  // Line 534: "NVIDIA A100 (8x A100 80GB)" (no "DGX" in the name), GPUs=1, TF32.
  const MeasuredCase* a100 = At("nvidia_dle_training_perf_tables.csv", 534);
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(CaseKey(*a100), "efficientnet-b0/a100-80gb/tf32/x1/b256");
  // The README's efficientnet-b4 and widese rows are not modeled.
  for (const MeasuredCase& c : Published()) {
    EXPECT_THAT(c.network, ::testing::Not(HasSubstr("b4"))) << c.line;
  }
  EXPECT_EQ(At("nvidia_dle_training_perf_tables.csv", 540), nullptr);  // b4 row
}

TEST(PublishedCases, DleDgx2IsTheV100Sxm3WithItsReadmeBatchAndSixteenGpus) {
  // nvidia_dle_training_perf_tables.csv line 352: MXNet, "NVIDIA DGX-2 (16x V100
  // 32GB)", GPUs=1, mixed precision 1492 img/s; the README's DGX-2 command is
  // `benchmark.py -n 1,2,4,8,16 -b 256 --dtype float16`.
  const MeasuredCase* c = At("nvidia_dle_training_perf_tables.csv", 352);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "resnet50/v100-sxm3-32gb/mixed/x1/b256");
  EXPECT_DOUBLE_EQ(c->throughput_sps, 1492);
  // Line 361: 16 GPUs, FP32, `-b 128` per GPU: the full node, global batch 2048.
  const MeasuredCase* node = At("nvidia_dle_training_perf_tables.csv", 361);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(CaseKey(*node), "resnet50/v100-sxm3-32gb/fp32/x16/b2048");
  EXPECT_DOUBLE_EQ(node->throughput_sps, 6338);
  // Line 356: 4 GPUs, neither one GPU nor the full node: not read.
  EXPECT_EQ(At("nvidia_dle_training_perf_tables.csv", 356), nullptr);
}

TEST(PublishedCases, DleTensorflowBatchPerPrecisionFromTheRawColumn) {
  // Line 378: TensorFlow, DGX-1 (8x V100 16G), GPUs=1, "128 (FP32) / 256 (AMP)",
  // "Throughput - FP32 + XLA", 412 img/s. Line 379: same, mixed precision, 1270.
  const MeasuredCase* fp32 = At("nvidia_dle_training_perf_tables.csv", 378);
  const MeasuredCase* mixed = At("nvidia_dle_training_perf_tables.csv", 379);
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(mixed, nullptr);
  EXPECT_EQ(CaseKey(*fp32), "resnet50/v100-sxm2/fp32/x1/b128");
  EXPECT_DOUBLE_EQ(fp32->throughput_sps, 412);
  EXPECT_EQ(CaseKey(*mixed), "resnet50/v100-sxm2/mixed/x1/b256");
  EXPECT_DOUBLE_EQ(mixed->throughput_sps, 1270);
}

TEST(PublishedCases, DleEightGpusIsGlobalBatchAndThroughput) {
  // Line 364: PyTorch resnet50v1.5, DGX A100 (8x A100 80GB), GPUs=8,
  // "Throughput - TF32", 7248 img/s; configs.yml DGXA100 TF32 batch_size 256 per
  // GPU: global batch 8 x 256 = 2048.
  const MeasuredCase* c = At("nvidia_dle_training_perf_tables.csv", 364);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "resnet50/a100-80gb/tf32/x8/b2048");
  EXPECT_DOUBLE_EQ(c->throughput_sps, 7248);
  // Line 346 is GPUs=2: only 1 and 8 GPUs (16 on the DGX-2) are read.
  EXPECT_EQ(At("nvidia_dle_training_perf_tables.csv", 346), nullptr);
}

TEST(CaseKey, SequenceLengthAfterTheNetworkAccumulationAtTheEnd) {
  MeasuredCase c;
  c.network = "bert-large";
  c.seq_len = 128;
  c.device = "v100-sxm2";
  c.precision = Precision::kMixed;
  c.batch = 16;
  c.accumulation = 4096;
  EXPECT_EQ(CaseKey(c), "bert-large/s128/v100-sxm2/mixed/x1/b16/a4096");
  EXPECT_EQ(CaseNetworkKey(c), "bert-large/s128");
}

TEST(PublishedCases, DleBertPretrainingReadsSequenceLengthAndAccumulation) {
  // nvidia_dle_training_perf_tables.csv line 406: TensorFlow BERT, DGX-1 (8x
  // V100 16GB), pre-training, GPUs=1, batch "16 , 8", "Sequence Length=128;
  // Gradient Accumulation: mixed precision, FP32=4096, 8192;Global Batch
  // Size=65536", mixed precision 134.34 sequences/s: 16 x 4096 = 65536.
  const MeasuredCase* mixed = At("nvidia_dle_training_perf_tables.csv", 406);
  ASSERT_NE(mixed, nullptr);
  EXPECT_EQ(CaseKey(*mixed), "bert-large/s128/v100-sxm2/mixed/x1/b16/a4096");
  EXPECT_DOUBLE_EQ(mixed->throughput_sps, 134.34);
  EXPECT_EQ(mixed->framework, "tensorflow");
  ASSERT_TRUE(mixed->optimizer.has_value());
  EXPECT_EQ(*mixed->optimizer, Optimizer::kAdam);
  EXPECT_THAT(mixed->note, HasSubstr("LAMB modeled as Adam"));
  // Line 407: the same row in FP32, 8 x 8192.
  const MeasuredCase* fp32 = At("nvidia_dle_training_perf_tables.csv", 407);
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(CaseKey(*fp32), "bert-large/s128/v100-sxm2/fp32/x1/b8/a8192");
  // Line 442: DGX-2, GPUs=1, mixed: 64 x 1024 = 65536, read. Line 443, its
  // FP32 twin, prints batch 32 with accumulation 8192 (262144, not the
  // global 65536): the row contradicts itself and is not read.
  const MeasuredCase* dgx2 = At("nvidia_dle_training_perf_tables.csv", 442);
  ASSERT_NE(dgx2, nullptr);
  EXPECT_EQ(CaseKey(*dgx2), "bert-large/s128/v100-sxm3-32gb/mixed/x1/b64/a1024");
  EXPECT_EQ(At("nvidia_dle_training_perf_tables.csv", 443), nullptr);
  // Line 408 is GPUs=4: only one GPU and the whole node are read.
  EXPECT_EQ(At("nvidia_dle_training_perf_tables.csv", 408), nullptr);
}

TEST(PublishedCases, DleBertSquadFineTuningAt384Tokens) {
  // Line 418: DGX-1 16GB, SQuAD v1.1 fine-tuning, GPUs=1, batch "4,2", mixed
  // precision 29.74 sequences/s; line 422: GPUs=8, 189.77 (global batch 8 x 4).
  const MeasuredCase* one = At("nvidia_dle_training_perf_tables.csv", 418);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(CaseKey(*one), "bert-large/s384/v100-sxm2/mixed/x1/b4");
  EXPECT_DOUBLE_EQ(one->throughput_sps, 29.74);
  EXPECT_EQ(one->accumulation, 1);
  const MeasuredCase* node = At("nvidia_dle_training_perf_tables.csv", 422);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(CaseKey(*node), "bert-large/s384/v100-sxm2/mixed/x8/b32");
  EXPECT_DOUBLE_EQ(node->throughput_sps, 189.77);
}

TEST(PublishedCases, PolluxThroughputIsLocalBatchOverStepTime) {
  // pollux_t4_single_node.csv line 22: "cifar10,1,32,0.0427886962890625,...":
  // 32 / 0.0427886962890625 = 747.86 samples/s.
  const MeasuredCase* c = At("pollux_t4_single_node.csv", 22);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "resnet18-cifar/t4/fp32/x1/b32");
  EXPECT_NEAR(c->throughput_sps, 747.86, 0.01);
  // Line 101: "imagenet,1,200,0.923530888557434,...": 200 / 0.92353 = 216.56.
  const MeasuredCase* r50 = At("pollux_t4_single_node.csv", 101);
  ASSERT_NE(r50, nullptr);
  // The artifact's ImageNet script runs apex AMP (opt_level O1) in NCHW.
  EXPECT_EQ(CaseKey(*r50), "resnet50/t4/mixed/x1/b200");
  EXPECT_EQ(r50->layout, ActivationLayout::kNchw);
  EXPECT_NEAR(r50->throughput_sps, 216.56, 0.01);
  // Placement 1 only: 11 cifar10 and 8 imagenet batch sizes (rows 21-31, 94-101).
  int cifar = 0, imagenet = 0;
  for (const MeasuredCase& m : Published()) {
    if (m.device != "t4") continue;
    cifar += m.network == "resnet18-cifar";
    imagenet += m.network == "resnet50";
  }
  EXPECT_EQ(cifar, 11);
  EXPECT_EQ(imagenet, 8);
}

TEST(PublishedCases, PolluxBertIsBertBaseOnSquadSequences) {
  // pollux_t4_single_node.csv line 2: "bert,1,4,0.45532354712486267,...":
  // 4 / 0.45532354712486267 = 8.7850 sequences/s of 384 tokens, Adam.
  const MeasuredCase* c = At("pollux_t4_single_node.csv", 2);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "bert-base/s384/t4/fp32/x1/b4");
  EXPECT_NEAR(c->throughput_sps, 8.7850, 1e-4);
  ASSERT_TRUE(c->optimizer.has_value());
  EXPECT_EQ(*c->optimizer, Optimizer::kAdam);
  // Placement 1 only: batches 4, 6, 8, 11, 12 (lines 2-6); line 7 is placement 2.
  int bert = 0;
  for (const MeasuredCase& m : Published()) bert += m.network == "bert-base";
  EXPECT_EQ(bert, 5);
  EXPECT_EQ(At("pollux_t4_single_node.csv", 7), nullptr);
}

TEST(PublishedCases, Koshian2SteadyEpochAgreesWithTheAuthorsSummary) {
  // koshian2's result_summary.csv (tests/data/measured):
  // "gpu,64,FALSE,FALSE,FALSE,1,7.1,993.6,982.2,2.4,19662.6": epochs 2-20 mean
  // 982.2 s; 50000 / 982.2 = 50.906 img/s (the summary rounds to 0.05 s: +/- 0.003).
  const MeasuredCase* gpu = ByKey("wrn-k7n4-7x7/k80/fp32/x1/b64", "keras");
  ASSERT_NE(gpu, nullptr);
  EXPECT_NEAR(gpu->throughput_sps, 50000 / 982.2, 0.003);
  // The series starts at line 3 (gpu, 64, ..., epoch 2, 976.306).
  EXPECT_EQ(gpu->line, 3);
  // "tpu,1024,FALSE,FALSE,FALSE,1,0.1,177.3,81.7,0.5,1729.2": 50000 / 81.7 = 612.0,
  // +/- 0.4 for the summary's rounding to 0.05 s.
  const MeasuredCase* tpu = ByKey("wrn-k7n4-7x7/tpu-v2-8/fp32/x1/b1024", "keras");
  ASSERT_NE(tpu, nullptr);
  EXPECT_NEAR(tpu->throughput_sps, 50000 / 81.7, 0.4);
  EXPECT_THAT(tpu->note, HasSubstr("global"));
  // The benchmark compiles the model with Adam: modeled with its update.
  EXPECT_EQ(tpu->optimizer, std::optional<Optimizer>(Optimizer::kAdam));
  EXPECT_EQ(CaseModelOptions(*tpu, Optimizer::kSgdMomentum).optimizer, Optimizer::kAdam);
}

TEST(PublishedCases, PaddleK40mAndItsOomRowSkipped) {
  // paddle_benchmark_k40m_gpu.csv line 2: "single_gpu_image,AlexNet,PaddlePaddle,
  // 1,64,64,,195": 64 / 0.195 s = 328.2 img/s.
  const MeasuredCase* c = At("paddle_benchmark_k40m_gpu.csv", 2);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "alexnet/k40m/fp32/x1/b64");
  EXPECT_NEAR(c->throughput_sps, 328.205, 0.001);
  EXPECT_EQ(c->framework, "paddlepaddle");
  // Line 22: GoogleNet, Caffe, batch 256, "OOM": no throughput, no case.
  EXPECT_EQ(At("paddle_benchmark_k40m_gpu.csv", 22), nullptr);
  // Line 24: SmallNet is not in the zoo.
  EXPECT_EQ(At("paddle_benchmark_k40m_gpu.csv", 24), nullptr);
}

TEST(PublishedCases, PaddleXeonRowsPerMathLibrary) {
  // paddle_intel_xeon6148_cpu_train.csv line 17: "ResNet-50,MKL-DNN,64,81.69".
  const MeasuredCase* c = At("paddle_intel_xeon6148_cpu_train.csv", 17);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CaseKey(*c), "resnet50/xeon-6148x2/fp32/x1/b64");
  EXPECT_DOUBLE_EQ(c->throughput_sps, 81.69);
  EXPECT_EQ(c->framework, "paddlepaddle+mkl-dnn");
  // Line 2: "VGG-19,OpenBLAS,64,7.80".
  const MeasuredCase* vgg = At("paddle_intel_xeon6148_cpu_train.csv", 2);
  ASSERT_NE(vgg, nullptr);
  EXPECT_EQ(vgg->network, "vgg19");
  EXPECT_EQ(vgg->framework, "paddlepaddle+openblas");
  // 4 networks x 3 math libraries x 3 batches.
  int xeon = 0;
  for (const MeasuredCase& m : Published()) xeon += m.device == "xeon-6148x2";
  EXPECT_EQ(xeon, 36);
}

// A scratch directory with the five tables, `file` replaced by `text`.
std::string ScratchDir(const std::string& name, const std::string& file, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::create_directories(dir);
  for (const char* table :
       {"nvidia_dle_training_perf_tables.csv", "pollux_t4_single_node.csv",
        "koshian2_tpu_benchmark_main_per_epoch.csv", "paddle_benchmark_k40m_gpu.csv",
        "paddle_intel_xeon6148_cpu_train.csv"}) {
    std::filesystem::copy_file(std::filesystem::path(MeasuredDirValidate()) / table, dir / table,
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::ofstream(dir / file) << text;
  return dir.string();
}

std::string ErrorOf(const std::string& dir) {
  try {
    PublishedCases(dir);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no DataError";
}

TEST(PublishedCases, BadRowsNameFileLineAndField) {
  const std::string bad_time =
      ErrorOf(ScratchDir("bad_step_time", "pollux_t4_single_node.csv",
                         "model,placement,local_bsz,step_time,sync_time\ncifar10,1,32,0.04,0.0005\n"
                         "cifar10,1,64,fast,0.0005\n"));
  EXPECT_THAT(bad_time, HasSubstr("pollux_t4_single_node.csv:3"));
  EXPECT_THAT(bad_time, HasSubstr("'step_time'"));

  const std::string short_row = ErrorOf(
      ScratchDir("short_row", "paddle_benchmark_k40m_gpu.csv",
                 "table,model,framework,num_gpus,batch_size_per_gpu,total_batch_size,hidden_size,"
                 "time_ms_per_batch\nsingle_gpu_image,AlexNet,PaddlePaddle,1,64,64\n"));
  EXPECT_THAT(short_row, HasSubstr("paddle_benchmark_k40m_gpu.csv:2"));
  EXPECT_THAT(short_row, HasSubstr("the row has 6 fields but the header (line 1) has 8"));

  const std::string bad_bool = ErrorOf(ScratchDir(
      "bad_bool", "koshian2_tpu_benchmark_main_per_epoch.csv",
      "device,batch_size,use_validation,use_augmentation,from_storage,num_workers,epoch,"
      "epoch_time_s,initial_time_s,source_file\ngpu,64,maybe,False,False,1,2,976.3,7.1,x.dat\n"));
  EXPECT_THAT(bad_bool, HasSubstr("koshian2_tpu_benchmark_main_per_epoch.csv:2"));
  EXPECT_THAT(bad_bool, HasSubstr("'use_validation'"));

  const std::string no_column =
      ErrorOf(ScratchDir("no_column", "pollux_t4_single_node.csv", "model,placement,local_bsz\n"));
  EXPECT_THAT(no_column, HasSubstr("'step_time': column missing"));
}

TEST(PublishedCases, MissingTableIsAnInputError) {
  EXPECT_THROW(PublishedCases(::testing::TempDir() + "/no_such_measured_dir"), InputError);
}

TEST(PercentError, SignedRelativeToTheMeasurement) {
  EXPECT_DOUBLE_EQ(PercentError(110, 100), 10);  // 10 too fast: +10%
  EXPECT_DOUBLE_EQ(PercentError(75, 100), -25);  // 25 too slow: -25%
  EXPECT_DOUBLE_EQ(PercentError(412, 412), 0);
  EXPECT_THROW(PercentError(1, 0), UsageError);
  EXPECT_THROW(PercentError(NAN, 1), UsageError);
}

TEST(SummarizeErrorsPct, MedianAndMaximumOfAbsoluteErrors) {
  // |10|, |-25|, |5|, |-2| sorted: 2, 5, 10, 25: median (5 + 10) / 2 = 7.5, max 25.
  const ErrorSummary even = SummarizeErrorsPct({10, -25, 5, -2});
  EXPECT_EQ(even.cases, 4);
  EXPECT_DOUBLE_EQ(even.median_abs_error_pct, 7.5);
  EXPECT_DOUBLE_EQ(even.max_abs_error_pct, 25);
  // |-3|, |1|, |2| sorted: 1, 2, 3: median 2, max 3.
  const ErrorSummary odd = SummarizeErrorsPct({-3, 1, 2});
  EXPECT_DOUBLE_EQ(odd.median_abs_error_pct, 2);
  EXPECT_DOUBLE_EQ(odd.max_abs_error_pct, 3);
  const ErrorSummary none = SummarizeErrorsPct({});
  EXPECT_EQ(none.cases, 0);
  EXPECT_TRUE(std::isnan(none.median_abs_error_pct));
  EXPECT_TRUE(std::isnan(none.max_abs_error_pct));
}

MeasuredCase CaseValidate(const std::string& network, const std::string& device,
                          Precision precision, int64_t batch, double throughput_sps) {
  MeasuredCase c;
  c.network = network;
  c.device = device;
  c.precision = precision;
  c.batch = batch;
  c.throughput_sps = throughput_sps;
  return c;
}

TEST(Validate, MarksCalibratedCasesInSampleAndSummarisesPerDevice) {
  const MeasuredCase a = CaseValidate("resnet18-cifar", "t4", Precision::kFp32, 32, 747.86);
  const MeasuredCase b = CaseValidate("resnet18-cifar", "t4", Precision::kFp32, 64, 1069.6);
  const MeasuredCase c = CaseValidate("resnet50", "v100-sxm2", Precision::kFp32, 96, 384);
  ValidateOptions options;
  Device t4 = LoadDevice("t4");
  t4.calibrated_on = {CaseKey(a)};  // calibrated on `a` only
  options.devices = {t4};
  const ValidationReport report = Validate({a, b, c}, options);
  ASSERT_EQ(report.cases.size(), 3u);
  EXPECT_TRUE(report.cases[0].in_sample);
  EXPECT_FALSE(report.cases[1].in_sample);
  EXPECT_FALSE(report.cases[2].in_sample);  // the catalog v100-sxm2 is calibrated on nothing
  for (const ValidatedCase& v : report.cases) {
    ASSERT_TRUE(v.modeled) << v.reason;
    // The prediction is ModelStep's at the case's batch on the device used.
    const Device& d = v.measured.device == "t4" ? t4 : LoadDevice("v100-sxm2");
    const ModeledStep step = ModelStep(ZooNetwork(v.measured.network), d, v.measured.batch);
    EXPECT_DOUBLE_EQ(v.predicted_sps, step.throughput_sps);
    EXPECT_DOUBLE_EQ(v.error_pct, 100 * (step.throughput_sps - v.measured.throughput_sps) /
                                      v.measured.throughput_sps);
  }
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].device, "t4");
  EXPECT_EQ(report.devices[0].in_sample.cases, 1);
  EXPECT_EQ(report.devices[0].out_of_sample.cases, 1);
  // One out-of-sample case per device: its |error| is both the median and the max.
  EXPECT_DOUBLE_EQ(report.devices[0].out_of_sample.median_abs_error_pct,
                   std::fabs(report.cases[1].error_pct));
  EXPECT_DOUBLE_EQ(report.devices[1].out_of_sample.max_abs_error_pct,
                   std::fabs(report.cases[2].error_pct));
  // The headline is out-of-sample only: cases b and c.
  EXPECT_EQ(report.out_of_sample.cases, 2);
  EXPECT_DOUBLE_EQ(
      report.out_of_sample.max_abs_error_pct,
      std::max(std::fabs(report.cases[1].error_pct), std::fabs(report.cases[2].error_pct)));
  EXPECT_EQ(report.in_sample.cases, 1);
}

TEST(Validate, UnmodelableCasesKeepTheirReason) {
  ValidateOptions options;
  options.require_fit = true;
  const ValidationReport report = Validate(
      {
          // The T4 has no TF32 units (NVIDIA T4 datasheet: FP32, FP16, INT8, INT4).
          CaseValidate("resnet50", "t4", Precision::kTf32, 64, 100),
          // VGG-16 at batch 100,000: its first conv output alone is 64 x 224 x 224
          // x 4 bytes = 12.8 MB per sample, 1.28 TB for the batch, beyond a K80's 12 GiB.
          CaseValidate("vgg16", "k80", Precision::kFp32, 100000, 10),
          CaseValidate("no-such-network", "t4", Precision::kFp32, 8, 10),
          CaseValidate("resnet50", "no-such-device", Precision::kFp32, 8, 10),
      },
      options);
  ASSERT_EQ(report.cases.size(), 4u);
  for (const ValidatedCase& v : report.cases) EXPECT_FALSE(v.modeled);
  EXPECT_THAT(report.cases[0].reason, HasSubstr("no TF32 units"));
  EXPECT_THAT(report.cases[1].reason, HasSubstr("out of memory"));
  EXPECT_THAT(report.cases[2].reason, HasSubstr("network not loaded"));
  EXPECT_THAT(report.cases[3].reason, HasSubstr("device not loaded"));
  EXPECT_EQ(report.not_modeled, 4);
  EXPECT_EQ(report.out_of_sample.cases, 0);
  EXPECT_TRUE(std::isnan(report.out_of_sample.median_abs_error_pct));
}

TEST(Validate, MeasuredCasesBeyondTheMemoryModelArePredictedAndFlagged) {
  // The same VGG-16 batch of 100,000 as above: without require_fit it is
  // predicted (a published case ran, so the memory model is what is wrong)
  // and the memory model's verdict is kept.
  const ValidationReport report =
      Validate({CaseValidate("vgg16", "k80", Precision::kFp32, 100000, 10)});
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_TRUE(report.cases[0].modeled);
  EXPECT_GT(report.cases[0].predicted_sps, 0);
  EXPECT_THAT(report.cases[0].memory_note, HasSubstr("out of memory"));
  EXPECT_EQ(report.out_of_sample.cases, 1);
}

TEST(Validate, EveryPublishedCaseIsModeledOrSaysWhy) {
  const ValidationReport report = Validate(Published());
  ASSERT_EQ(report.cases.size(), Published().size());
  int modeled = 0;
  for (const ValidatedCase& v : report.cases) {
    if (v.modeled) {
      ++modeled;
      EXPECT_GT(v.predicted_sps, 0) << v.key;
    } else {
      EXPECT_FALSE(v.reason.empty()) << v.key;
    }
  }
  EXPECT_EQ(modeled + report.not_modeled, static_cast<int>(report.cases.size()));
  EXPECT_EQ(report.out_of_sample.cases, modeled);  // the catalog is calibrated on nothing
}

// Cases "measured" on `truth` (exactly its modeled throughput), named after
// `name` so that Validate models them on the catalog device of that name.
std::vector<MeasuredCase> MeasuredOn(const Device& truth, const std::string& name,
                                     const std::string& network, const std::string& framework,
                                     Precision precision) {
  std::vector<MeasuredCase> cases;
  DeviceModelOptions options;
  options.precision = precision;
  for (int64_t batch : {16, 64, 256}) {
    MeasuredCase c =
        CaseValidate(network, name, precision, batch,
                     ModelStep(ZooNetwork(network), truth, batch, options).throughput_sps);
    c.framework = framework;
    cases.push_back(c);
  }
  return cases;
}

TEST(Validate, CrossValidationPredictsEachNetworkFromTheOthers) {
  // The "true" T4: cuDNN at 0.7 of the catalog's compute efficiencies and 4 ms
  // of host work per step (catalog: 1 ms). The model's form is exact, so a
  // calibration on one network predicts the other to rounding, while the
  // catalog device is off by the scale.
  const Device t4 = LoadDevice("t4");
  Device truth = t4;
  ScaleComputeEfficiency(truth, 0.7);
  truth.step_host_s = 4e-3;
  std::vector<MeasuredCase> cases =
      MeasuredOn(truth, "t4", "cnn-cifar-small", "pytorch", Precision::kFp32);
  for (const MeasuredCase& c :
       MeasuredOn(truth, "t4", "resnet18-cifar", "pytorch", Precision::kFp32)) {
    cases.push_back(c);
  }
  ValidateOptions options;
  options.cross_validate = true;
  const ValidationReport report = Validate(cases, options);
  ASSERT_TRUE(report.cross_validated_run);
  ASSERT_EQ(report.devices.size(), 1u);
  const DeviceValidation& d = report.devices[0];
  EXPECT_EQ(d.held_out_by, "network");
  ASSERT_EQ(d.folds.size(), 2u);
  EXPECT_EQ(d.folds[0].group, "cnn-cifar-small");
  EXPECT_EQ(d.folds[0].training_cases, 3);
  ASSERT_TRUE(d.folds[0].computed) << d.folds[0].problem;
  ASSERT_EQ(d.folds[0].parameters.size(), 2u);  // FP32 cases: compute scale and host
  EXPECT_NEAR(d.folds[0].parameters[0].value, 0.7, 1e-6);
  EXPECT_NEAR(d.folds[0].parameters[1].value, 4e-3, 1e-8);
  for (const ValidatedCase& v : report.cases) {
    SCOPED_TRACE(v.key);
    EXPECT_TRUE(v.cv_calibrated);
    EXPECT_EQ(v.cv_group, v.measured.network);
    EXPECT_GT(std::fabs(v.error_pct), 5.0);
    EXPECT_LT(std::fabs(v.cv_error_pct), 1e-4);
  }
  EXPECT_EQ(report.cross_validated.cases, 6);
  EXPECT_LT(report.cross_validated.max_abs_error_pct, 1e-4);
}

TEST(Validate, CrossValidationFallsBackToFrameworksThenToTheCatalog) {
  const Device v100 = LoadDevice("v100-sxm2");
  Device truth = v100;
  truth.step_host_s = 10e-3;
  // One network, two frameworks on the V100: leave one framework out; the FP32
  // and mixed cases of the training framework fit compute, host and tensor.
  std::vector<MeasuredCase> cases;
  for (const char* framework : {"mxnet", "pytorch"}) {
    for (Precision p : {Precision::kFp32, Precision::kMixed}) {
      for (const MeasuredCase& c : MeasuredOn(truth, "v100-sxm2", "resnet50", framework, p)) {
        cases.push_back(c);
      }
    }
  }
  // One network and one framework on the K80: nothing to hold out.
  const std::vector<MeasuredCase> k80 =
      MeasuredOn(LoadDevice("k80"), "k80", "resnet18-cifar", "keras", Precision::kFp32);
  cases.insert(cases.end(), k80.begin(), k80.end());
  ValidateOptions options;
  options.cross_validate = true;
  const ValidationReport report = Validate(cases, options);
  ASSERT_EQ(report.devices.size(), 2u);
  const DeviceValidation& v100_summary = report.devices[0];
  EXPECT_EQ(v100_summary.held_out_by, "framework");
  ASSERT_EQ(v100_summary.folds.size(), 2u);
  ASSERT_TRUE(v100_summary.folds[1].computed) << v100_summary.folds[1].problem;
  ASSERT_EQ(v100_summary.folds[1].parameters.size(), 3u);
  EXPECT_EQ(v100_summary.folds[1].parameters[2].name, "tensor_scale");
  EXPECT_NEAR(v100_summary.folds[1].parameters[1].value, 10e-3, 1e-7);
  const DeviceValidation& k80_summary = report.devices[1];
  EXPECT_EQ(k80_summary.held_out_by, "");
  EXPECT_TRUE(k80_summary.folds.empty());
  for (const ValidatedCase& v : report.cases) {
    SCOPED_TRACE(v.key);
    if (v.measured.device == "k80") {
      // The catalog prediction, which is out-of-sample too (here exact).
      EXPECT_FALSE(v.cv_calibrated);
      EXPECT_DOUBLE_EQ(v.cv_predicted_sps, v.predicted_sps);
    } else {
      EXPECT_TRUE(v.cv_calibrated);
      EXPECT_EQ(v.cv_group, v.measured.framework);
      EXPECT_LT(std::fabs(v.cv_error_pct), 1e-3);
    }
  }
  EXPECT_EQ(report.cross_validated.cases, 15);
}

TEST(Validate, CrossDevicePredictsANetworkFromItsCasesOnOtherDevices) {
  // The "truth": resnet18-cifar's kernels reach 0.6 of the catalog's compute
  // efficiencies on the T4 and the V100 but 0.4 on the K80; each GPU keeps its
  // own overheads. The K80's fold is fitted on the T4's and the V100's cases
  // alone, so its scale is exactly 0.6: had any K80 case leaked into its own
  // fold, the fit would be pulled below 0.6, and its cross-device prediction
  // would not miss the K80's own 0.4 as it must. cnn-cifar-small, measured on
  // the T4 only, cannot be predicted from elsewhere and keeps the catalog's.
  std::vector<MeasuredCase> cases;
  for (const auto& [name, scale] :
       std::vector<std::pair<const char*, double>>{{"t4", 0.6}, {"v100-sxm2", 0.6}, {"k80", 0.4}}) {
    Device truth = LoadDevice(name);
    ScaleComputeEfficiency(truth, scale);
    for (const MeasuredCase& c :
         MeasuredOn(truth, name, "resnet18-cifar", "pytorch", Precision::kFp32)) {
      cases.push_back(c);
    }
  }
  const std::vector<MeasuredCase> alone =
      MeasuredOn(LoadDevice("t4"), "t4", "cnn-cifar-small", "pytorch", Precision::kFp32);
  cases.insert(cases.end(), alone.begin(), alone.end());
  ValidateOptions options;
  options.cross_device = true;
  const ValidationReport report = Validate(cases, options);
  ASSERT_TRUE(report.cross_device_run);
  ASSERT_EQ(report.cross_device_folds.size(), 4u);  // resnet18-cifar x 3 devices, cnn x t4
  const CrossDeviceFold& k80 = report.cross_device_folds[2];
  EXPECT_EQ(k80.device, "k80");
  EXPECT_EQ(k80.training_devices, (std::vector<std::string>{"t4", "v100-sxm2"}));
  ASSERT_TRUE(k80.computed) << k80.problem;
  ASSERT_EQ(k80.parameters.size(), 1u);  // FP32 everywhere: the compute scale only
  EXPECT_NEAR(k80.parameters[0].value, 0.6, 1e-6);
  // The T4's fold sees the V100 (0.6) and the K80 (0.4): a scale between them.
  const CrossDeviceFold& t4 = report.cross_device_folds[0];
  EXPECT_EQ(t4.device, "t4");
  ASSERT_TRUE(t4.computed) << t4.problem;
  EXPECT_GT(t4.parameters[0].value, 0.4 + 1e-3);
  EXPECT_LT(t4.parameters[0].value, 0.6 - 1e-3);
  EXPECT_FALSE(report.cross_device_folds[3].computed);
  EXPECT_THAT(report.cross_device_folds[3].problem, HasSubstr("no other device"));
  for (const ValidatedCase& v : report.cases) {
    SCOPED_TRACE(v.key);
    if (v.measured.network == "resnet18-cifar") {
      EXPECT_TRUE(v.xdev_calibrated);
      EXPECT_GT(std::fabs(v.error_pct), 5.0);
      if (v.measured.device == "k80") {
        // Predicted at 0.6 where the truth is 0.4: too fast, as an honest fold must be.
        EXPECT_GT(v.xdev_error_pct, 5.0);
      }
    } else {
      EXPECT_FALSE(v.xdev_calibrated);
      EXPECT_DOUBLE_EQ(v.xdev_predicted_sps, v.predicted_sps);
    }
  }
  EXPECT_EQ(report.cross_device.cases, 12);
}

TEST(Validate, ReportsEachStageFromZeroToItsTotal) {
  // Nine cases: resnet18-cifar on three devices (three batches each, MeasuredOn),
  // cross-device (three (device, network) groups) and cross-validated per device.
  std::vector<MeasuredCase> cases;
  for (const char* name : {"t4", "v100-sxm2", "k80"}) {
    for (const MeasuredCase& c :
         MeasuredOn(LoadDevice(name), name, "resnet18-cifar", "pytorch", Precision::kFp32)) {
      cases.push_back(c);
    }
  }
  ValidateOptions options;
  options.cross_device = true;
  options.cross_validate = true;
  std::vector<Progress> seen;
  options.progress = [&](const Progress& p) { seen.push_back(p); };
  const ValidationReport report = Validate(cases, options);
  const auto n = static_cast<int64_t>(cases.size());
  // Per stage, in order: done 0, 1, ... up to the stage's total, told once each.
  const std::vector<std::pair<std::string, int64_t>> stages = {
      {"cases", n}, {"cross-device check", 3}, {"cross-validation", 3}};
  size_t at = 0;
  for (const auto& [stage, total] : stages) {
    SCOPED_TRACE(stage);
    for (int64_t done = 0; done <= total; ++done, ++at) {
      ASSERT_LT(at, seen.size());
      EXPECT_EQ(seen[at].stage, stage);
      EXPECT_EQ(seen[at].done, done);
      EXPECT_EQ(seen[at].total, total);
      EXPECT_FALSE(seen[at].what.empty());
    }
  }
  EXPECT_EQ(at, seen.size());
  EXPECT_EQ(report.cases.size(), cases.size());
  EXPECT_EQ(report.cross_device_folds.size(), 3u);
}

TEST(Validate, CrossDeviceCarriesScalesBetweenDevicesOfOneKindOnly) {
  // resnet18-cifar on a GPU and on a CPU: cuDNN's efficiency does not say what
  // oneDNN reaches, so neither predicts the other.
  std::vector<MeasuredCase> cases =
      MeasuredOn(LoadDevice("t4"), "t4", "resnet18-cifar", "pytorch", Precision::kFp32);
  const std::vector<MeasuredCase> cpu = MeasuredOn(LoadDevice("xeon-6148x2"), "xeon-6148x2",
                                                   "resnet18-cifar", "paddle", Precision::kFp32);
  cases.insert(cases.end(), cpu.begin(), cpu.end());
  ValidateOptions options;
  options.cross_device = true;
  const ValidationReport report = Validate(cases, options);
  ASSERT_EQ(report.cross_device_folds.size(), 2u);
  EXPECT_FALSE(report.cross_device_folds[0].computed);
  EXPECT_THAT(report.cross_device_folds[0].problem, HasSubstr("no other gpu"));
  EXPECT_FALSE(report.cross_device_folds[1].computed);
  EXPECT_THAT(report.cross_device_folds[1].problem, HasSubstr("no other cpu"));
  EXPECT_TRUE(report.cross_device_folds[1].training_devices.empty());
}

TEST(Validate, CrossDeviceNeedsTheScalesTheTargetUses) {
  // Mixed-precision cases on the V100 fit only the tensor scale; the K80's
  // FP32 cases need the compute scale: not predicted from them.
  std::vector<MeasuredCase> cases = MeasuredOn(LoadDevice("v100-sxm2"), "v100-sxm2",
                                               "resnet18-cifar", "pytorch", Precision::kMixed);
  const std::vector<MeasuredCase> k80 =
      MeasuredOn(LoadDevice("k80"), "k80", "resnet18-cifar", "pytorch", Precision::kFp32);
  cases.insert(cases.end(), k80.begin(), k80.end());
  ValidateOptions options;
  options.cross_device = true;
  const ValidationReport report = Validate(cases, options);
  ASSERT_EQ(report.cross_device_folds.size(), 2u);
  EXPECT_FALSE(report.cross_device_folds[1].computed);
  EXPECT_THAT(report.cross_device_folds[1].problem, HasSubstr("compute scale"));
}

TEST(SummarizeBySetup, OneRowPerDeviceAndFrameworkOfOutOfSampleCases) {
  // Three modeled out-of-sample cases, one in-sample and one not modeled.
  ValidationReport report;
  auto add = [&report](const std::string& device, const std::string& framework, double error,
                       bool modeled, bool in_sample) {
    ValidatedCase v;
    v.measured.device = device;
    v.measured.framework = framework;
    v.modeled = modeled;
    v.in_sample = in_sample;
    v.error_pct = error;
    v.xdev_error_pct = error / 2;
    report.cases.push_back(v);
  };
  add("k40m", "caffe", 130, true, false);
  add("k40m", "paddlepaddle", -20, true, false);
  add("k40m", "caffe", 110, true, false);
  add("k40m", "caffe", 1, true, true);         // in-sample: left out
  add("k40m", "tensorflow", 5, false, false);  // not modeled: left out
  report.cross_device_run = true;
  const std::vector<SetupSummary> setups = SummarizeBySetup(report);
  ASSERT_EQ(setups.size(), 2u);
  EXPECT_EQ(setups[0].framework, "caffe");
  EXPECT_EQ(setups[0].catalog.cases, 2);
  EXPECT_DOUBLE_EQ(setups[0].catalog.median_abs_error_pct, 120);  // (130 + 110) / 2
  EXPECT_DOUBLE_EQ(setups[0].catalog.max_abs_error_pct, 130);
  EXPECT_DOUBLE_EQ(setups[0].cross_device.median_abs_error_pct, 60);
  EXPECT_EQ(setups[0].cross_validated.cases, 0);  // cross-validation did not run
  EXPECT_EQ(setups[1].framework, "paddlepaddle");
  EXPECT_DOUBLE_EQ(setups[1].catalog.median_abs_error_pct, 20);
}

TEST(SummarizeByWorkload, OneRowPerNetworkPrecisionAndDeviceKind) {
  ValidationReport report;
  auto add = [&report](const std::string& network, const std::string& device, Precision precision,
                       double error, bool in_sample) {
    ValidatedCase v;
    v.measured.network = network;
    v.measured.device = device;
    v.measured.precision = precision;
    v.modeled = true;
    v.in_sample = in_sample;
    v.error_pct = error;
    report.cases.push_back(v);
  };
  add("resnet50", "v100-sxm2", Precision::kMixed, 10, false);
  add("resnet50", "a100", Precision::kMixed, -30, false);
  add("resnet50", "v100-sxm2", Precision::kFp32, 5, false);
  add("resnet50", "xeon-6148x2", Precision::kFp32, 100, false);  // a CPU: its own row
  add("resnet50", "a100", Precision::kMixed, 1, true);           // in-sample: left out
  const std::vector<WorkloadSummary> rows = SummarizeByWorkload(report);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].precision, "mixed");
  EXPECT_EQ(rows[0].kind, "gpu");
  EXPECT_EQ(rows[0].catalog.cases, 2);
  EXPECT_DOUBLE_EQ(rows[0].catalog.median_abs_error_pct, 20);  // (10 + 30) / 2
  EXPECT_EQ(rows[1].precision, "fp32");
  EXPECT_EQ(rows[1].kind, "gpu");
  EXPECT_EQ(rows[2].kind, "cpu");
  EXPECT_DOUBLE_EQ(rows[2].catalog.max_abs_error_pct, 100);
}

TEST(Validate, CrossValidationLeavesInSampleCasesOut) {
  const MeasuredCase a = CaseValidate("resnet18-cifar", "t4", Precision::kFp32, 32, 747.86);
  const MeasuredCase b = CaseValidate("resnet50", "t4", Precision::kFp32, 64, 170);
  ValidateOptions options;
  options.cross_validate = true;
  Device t4 = LoadDevice("t4");
  t4.calibrated_on = {CaseKey(a)};
  options.devices = {t4};
  const ValidationReport report = Validate({a, b}, options);
  // Only `b` is out-of-sample: one network left, nothing to hold out.
  EXPECT_EQ(report.cross_validated.cases, 1);
  EXPECT_EQ(report.devices[0].held_out_by, "");
  EXPECT_FALSE(report.cases[0].cv_calibrated);
}

TEST(MixedPrecisionRatios, RatioOfModeledStepTimesAndBand) {
  const Device t4 = LoadDevice("t4");
  const std::vector<MixedRatio> ratios = MixedPrecisionRatios(t4, {"resnet50"}, {16, 32});
  ASSERT_EQ(ratios.size(), 2u);
  for (const MixedRatio& r : ratios) {
    DeviceModelOptions options;
    const double fp32 = ModelStep(ZooNetwork("resnet50"), t4, r.batch, options).step_time_s;
    options.precision = Precision::kMixed;
    const double mixed = ModelStep(ZooNetwork("resnet50"), t4, r.batch, options).step_time_s;
    EXPECT_DOUBLE_EQ(r.ratio, mixed / fp32);
    EXPECT_LT(r.ratio, 1);  // 65 TFLOPS FP16 against 8.1 FP32 (T4 datasheet)
    EXPECT_EQ(r.in_band, r.ratio >= 0.45 && r.ratio <= 0.60);
    options.layout = ActivationLayout::kNhwc;
    const double nhwc = ModelStep(ZooNetwork("resnet50"), t4, r.batch, options).step_time_s;
    EXPECT_DOUBLE_EQ(r.ratio_nhwc, nhwc / fp32);
    EXPECT_LT(r.ratio_nhwc, r.ratio);  // NCHW pays the transposes NHWC does not
  }
}

TEST(HostCheck, OneTinyBatchMeasuredAndModeled) {
  HostCheckOptions options;
  options.batches = {2};
  options.min_time_s = 0.01;
  const HostCheck check = RunHostCheck(options);
  ASSERT_EQ(check.rows.size(), 1u);
  const HostCheckRow& row = check.rows[0];
  EXPECT_EQ(row.batch, 2);
  EXPECT_GT(row.measured_step_s, 0);
  EXPECT_GT(row.predicted_step_s, 0);
  // Throughput error from step times: (2/p - 2/m) / (2/m) = m/p - 1.
  EXPECT_NEAR(row.error_pct, 100 * (row.measured_step_s / row.predicted_step_s - 1), 1e-9);
  EXPECT_EQ(check.summary.cases, 1);
  options.batches = {};
  EXPECT_THROW(RunHostCheck(options), UsageError);
  // More threads than CPUs: refused.
  options.batches = {2};
  options.threads = AvailableCpus() + 1;
  EXPECT_THROW(RunHostCheck(options), UsageError);
  // One thread: the sweep and the host probe both run on one CPU.
  options.threads = 1;
  const HostCheck one = RunHostCheck(options);
  EXPECT_EQ(one.threads, 1);
  ASSERT_EQ(one.rows.size(), 1u);
  EXPECT_GT(one.rows[0].predicted_step_s, 0);
}

TEST(HostDevice, ProbedPerThreadCount) {
  const Device one = ProbeHostDevice(1);
  EXPECT_THAT(one.description, HasSubstr("1 thread, oneDNN ISA "));
  EXPECT_GT(one.fp32_flops_per_s, 0);
  // Cached: the same probe again.
  EXPECT_DOUBLE_EQ(ProbeHostDevice(1).fp32_flops_per_s, one.fp32_flops_per_s);
  EXPECT_THROW(ProbeHostDevice(-1), UsageError);
  EXPECT_THROW(ProbeHostDevice(AvailableCpus() + 1), UsageError);
  // BF16 units exactly where oneDNN runs BF16 here, saying what was measured;
  // the tensor curve is relative to that peak.
  const HostContext context = DescribeHost(1);
  EXPECT_EQ(one.tensor16_flops_per_s > 0, context.bf16_supported) << context.isa;
  if (context.bf16_supported) {
    EXPECT_EQ(one.tensor16_type, "bf16");
    EXPECT_THAT(one.sources.at("peak_flops_per_s.tensor16"), HasSubstr("measured"));
    ASSERT_FALSE(one.tensor_efficiency.points.empty());
    for (const EfficiencyCurve::Point& p : one.tensor_efficiency.points) {
      EXPECT_GT(p.efficiency, 0);
      EXPECT_LE(p.efficiency, 1);
    }
  }
}

TEST(HostDevice, Bf16DotPeakOnlyWithAvx512Bf16) {
  __builtin_cpu_init();
  const double peak = MeasureBf16DotPeakGflops(1, 0.005);
  EXPECT_EQ(peak > 0, static_cast<bool>(__builtin_cpu_supports("avx512bf16")));
  EXPECT_THROW(MeasureBf16DotPeakGflops(0), UsageError);
}

}  // namespace
}  // namespace fitspeed
