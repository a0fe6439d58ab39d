// Framework profiles: one profile's effect on a modeled step by hand, the
// leave-one-device-out folds, the JSON form and its errors, and the built-in
// profiles against the published cases.
#include "fitspeed/device/frameworks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/framework_profiles.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string MeasuredDir() { return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured"; }

// 10 TFLOPS FP32, 80 TFLOPS FP16; flat curves: compute 0.5, tensor 0.6,
// memory 0.8 at 1 TB/s; no launch time, 1 ms host per step.
Device FlatDevice() {
  return ParseDeviceJson(R"({
  "schema": "fitspeed.device/1", "name": "flat-gpu", "kind": "gpu",
  "cores": {"value": 1, "source": "test"},
  "peak_flops_per_s": {"fp32": {"value": 10e12, "source": "test"},
                       "tensor16": {"value": 80e12, "type": "fp16", "source": "test"}},
  "memory": {"bandwidth_bytes_per_s": {"value": 1e12, "source": "test"},
             "capacity_bytes": {"value": 8589934592, "source": "test"}},
  "efficiency": {"compute": {"points": [[1e6, 0.5]], "source": "test"},
                 "tensor": {"points": [[1e6, 0.6]], "source": "test"},
                 "memory": {"points": [[1e6, 0.8]], "source": "test"}},
  "overheads": {"kernel_launch_s": {"value": 0, "source": "test"},
                "step_host_s": {"value": 1e-3, "source": "test"}},
  "tiles": {"batch_multiple": {"value": 1, "source": "test"},
            "feature_multiple_fp32": {"value": 1, "source": "test"},
            "feature_multiple_tensor": {"value": 8, "source": "test"}}})",
                         "flat-gpu.json");
}

TEST(FrameworkProfile, HalvesTheTensorEfficiencyAndSetsTheHostOverheadByHand) {
  // input {4096} -> dense 4096 (no bias) -> loss, mixed precision, batch 1024.
  Network net("dense", Shape::Vector(4096));
  DenseAttrs big;
  big.units = 4096;
  big.bias = false;
  net.SoftmaxCrossEntropy(net.Dense("input", big, "big"));
  net.Finalize();
  FrameworkProfile profile;
  profile.name = "hand";
  profile.parameters = {{"tensor_scale", "", 1, 0.5}, {"step_host_s", "s", 1e-3, 2e-3}};
  const Device flat = FlatDevice();
  const Device profiled = ApplyFrameworkProfile(flat, profile);
  DeviceModelOptions mixed;
  mixed.precision = Precision::kMixed;
  const ModeledStep before = ModelStep(net, flat, 1024, mixed);
  const ModeledStep after = ModelStep(net, profiled, 1024, mixed);
  // The forward GEMM: 2 * 1024 * 4096 * 4096 = 34,359,738,368 FLOPs. Catalog:
  // at 0.6 of 80 TFLOPS, 7.158278827e-4 s; with the profile at 0.3: 1.431655765e-3 s.
  // Bytes: (1024*4096*2 in + 4096*4096*2 W + 1024*4096*2 out) = 50,331,648 B at
  // 0.8 TB/s = 6.29e-5 s: compute-bound both ways.
  const PassTime& f0 = before.layers[1].passes[0];
  const PassTime& f1 = after.layers[1].passes[0];
  EXPECT_DOUBLE_EQ(f0.flops, 34359738368.0);
  EXPECT_NEAR(f0.compute_s, 34359738368.0 / (80e12 * 0.6), 1e-15);
  EXPECT_NEAR(f1.compute_s, 34359738368.0 / (80e12 * 0.3), 1e-15);
  EXPECT_NEAR(f1.time_s, 1.4316557653e-3, 1e-12);
  EXPECT_DOUBLE_EQ(before.host_s, 1e-3);
  EXPECT_DOUBLE_EQ(after.host_s, 2e-3);
  EXPECT_THAT(profiled.sources.at("efficiency.tensor"), HasSubstr("framework profile 'hand'"));
  EXPECT_EQ(profiled.bases.at("overheads.step_host_s"), "carried");
}

TEST(FrameworkProfile, JsonRoundTripAndErrors) {
  FrameworkProfile p;
  p.name = "pytorch";
  p.devices = {"t4", "v100-sxm2"};
  p.networks = {"resnet50"};
  p.cases = 12;
  p.converged = true;
  p.rms_error = 0.1;
  p.parameters = {{"compute_scale", "", 1, 0.9, std::nan(""), std::nan(""), std::nan("")},
                  {"step_host_s", "s", 1e-3, 4e-3}};
  const std::vector<FrameworkProfile> back =
      ParseFrameworkProfiles(FrameworkProfilesToJson({p}), "p.json");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "pytorch");
  EXPECT_EQ(back[0].devices, p.devices);
  EXPECT_EQ(back[0].cases, 12);
  ASSERT_EQ(back[0].parameters.size(), 2u);
  EXPECT_DOUBLE_EQ(back[0].parameters[0].value, 0.9);
  EXPECT_TRUE(std::isnan(back[0].parameters[0].std_error));
  EXPECT_DOUBLE_EQ(back[0].parameters[1].value, 4e-3);

  std::string bad = FrameworkProfilesToJson({p});
  bad.replace(bad.find("\"compute_scale\""), 15, "\"speed_factor\"");
  try {
    ParseFrameworkProfiles(bad, "bad.json");
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("profiles[0].parameters[0].name"));
  }
  std::string negative = FrameworkProfilesToJson({p});
  negative.replace(negative.find("0.9"), 3, "-0.9");
  EXPECT_THROW(ParseFrameworkProfiles(negative, "neg.json"), DataError);
  EXPECT_THROW(ParseFrameworkProfiles(std::string("\x89PNG\r\n\x1a\n\0\0", 10), "x.png"),
               DataError);
  EXPECT_THROW(ParseFrameworkProfiles("{\"schema\": \"fitspeed.intervals/1\"}", "i.json"),
               DataError);
  // A schema of the wrong type is the same refusal, not the JSON library's type error.
  EXPECT_THROW(ParseFrameworkProfiles("{\"schema\": [{\"split\": \"test\"}]}", "a.json"),
               DataError);
}

TEST(FrameworkProfile, FindSaysWhichFrameworksHaveNoRuns) {
  EXPECT_EQ(FindFrameworkProfile("pytorch").name, "pytorch");
  try {
    FindFrameworkProfile("jax");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("no published GPU run"));
  }
  EXPECT_THROW(FindFrameworkProfile("theano"), UsageError);
}

TEST(FrameworkProfile, FoldsNeverFitTheHeldOutGpuAndTheBuiltInIsCurrent) {
  // data/frameworks.json must be regenerated (`fitspeed validate
  // --frameworks-out data/frameworks.json`) when the model, the catalog or the
  // cases change.
  const FrameworkProfileReport report = FitFrameworkProfiles(PublishedCases(MeasuredDir()));
  const std::vector<FrameworkProfile>& built_in = BuiltinFrameworkProfiles();
  ASSERT_EQ(report.profiles.size(), built_in.size());
  for (size_t i = 0; i < built_in.size(); ++i) {
    EXPECT_EQ(report.profiles[i].name, built_in[i].name);
    EXPECT_EQ(report.profiles[i].cases, built_in[i].cases);
    ASSERT_EQ(report.profiles[i].parameters.size(), built_in[i].parameters.size());
    for (size_t j = 0; j < built_in[i].parameters.size(); ++j) {
      EXPECT_NEAR(report.profiles[i].parameters[j].value, built_in[i].parameters[j].value,
                  1e-9 * (1 + std::abs(built_in[i].parameters[j].value)))
          << built_in[i].name << " " << built_in[i].parameters[j].name;
    }
  }
  int computed = 0;
  for (const FrameworkFold& f : report.folds) {
    for (const std::string& d : f.training_devices) EXPECT_NE(d, f.device) << f.framework;
    EXPECT_EQ(static_cast<int>(f.catalog_errors.size()), f.cases);
    if (!f.computed) {
      EXPECT_FALSE(f.problem.empty()) << f.framework << " " << f.device;
      continue;
    }
    ++computed;
    EXPECT_EQ(f.profile_errors.size(), f.catalog_errors.size());
  }
  // A fold holds out one publisher's runs on one GPU and fits on other publishers'
  // runs on other GPUs. PyTorch: NVIDIA's A100 and V100 runs from Pollux's T4 and
  // the T4 from NVIDIA's (3 folds); TensorFlow: Baidu's K40m from NVIDIA's (NVIDIA's
  // own GPUs from the K40m's FP32 runs cannot determine their tensor scale); MXNet
  // (NVIDIA's alone), Keras, Paddle and Caffe (one publisher each) have none.
  EXPECT_EQ(computed, 4);
  for (const FrameworkFold& f : report.folds) EXPECT_FALSE(f.publisher.empty()) << f.framework;
}

TEST(FrameworkProfile, ListsFrameworksTooThinForAProfileAndTakesGivenDevices) {
  // "thin" has one FP32 run: one case for its compute scale and host
  // overhead leaves no degree of freedom, so no profile, and the report says so.
  MeasuredCase thin;
  thin.network = "resnet50";
  thin.device = "v100-sxm2";
  thin.batch = 64;
  thin.throughput_sps = 300;
  thin.framework = "thin";
  thin.source = "test.csv";
  thin.line = 2;
  // "two" has runs on two GPUs, three per GPU at three batches.
  std::vector<MeasuredCase> cases = {thin};
  int line = 3;
  for (const char* device : {"v100-sxm2", "a100"}) {
    for (const int64_t batch : {32, 64, 128}) {
      MeasuredCase c = thin;
      c.device = device;
      c.framework = "two";
      c.batch = batch;
      c.throughput_sps = 200 + batch;
      c.line = line++;
      cases.push_back(c);
    }
  }
  const FrameworkProfileReport report = FitFrameworkProfiles(cases);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_EQ(report.skipped[0].name, "thin");
  EXPECT_EQ(report.skipped[0].cases, 1);
  EXPECT_THAT(report.skipped[0].reason, HasSubstr("no degree of freedom"));
  ASSERT_EQ(report.profiles.size(), 1u);
  EXPECT_EQ(report.profiles[0].name, "two");

  // A given device replaces the catalog's of its name: at half the V100's
  // compute efficiency, the V100's held-out runs are predicted slower.
  Device slow = LoadDevice("v100-sxm2");
  for (auto& point : slow.compute_efficiency.points) point.efficiency *= 0.5;
  const FrameworkProfileReport given = FitFrameworkProfiles(cases, CalibrationOptions{}, {slow});
  auto v100_fold = [](const FrameworkProfileReport& r) {
    for (const FrameworkFold& f : r.folds) {
      if (f.framework == "two" && f.device == "v100-sxm2") return f;
    }
    ADD_FAILURE() << "no v100-sxm2 fold";
    return FrameworkFold{};
  };
  const FrameworkFold catalog = v100_fold(report), slowed = v100_fold(given);
  ASSERT_EQ(catalog.catalog_errors.size(), 3u);
  ASSERT_EQ(slowed.catalog_errors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(slowed.catalog_errors[i], catalog.catalog_errors[i]);
}

}  // namespace
}  // namespace fitspeed
