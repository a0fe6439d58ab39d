// The measurement of `sweep --device B --from RUN --from-device A` read as
// cases of the network on A (fitspeed/calibrate/transfer_run.h): which files
// are cases CSVs, the precision names logs use, and what is left out.
#include "fitspeed/calibrate/transfer_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

using ::testing::ElementsAre;

std::string Data(const std::string& name) {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/" + name;
}

// A scratch file with `text`, removed at the end of the test.
class ScratchFile {
 public:
  ScratchFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + "/fitspeed_transfer_run_" + name) {
    std::ofstream(path_) << text;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Pollux's ResNet-18 steps on a T4: 11 batch sizes; the log names the task
// ("cifar10"), so network= states the network.
const char* kLog = "transfer/pollux_t4_resnet18_cifar10_p1.csv";

TransferRun FromLog(const std::string& attributes, Precision precision) {
  DeviceModelOptions options;
  options.precision = precision;
  TransferSource source;
  source.from = Data(kLog) + "@" + attributes;
  source.from_device = "t4";
  source.model = "resnet18-cifar";
  return CalibrateFromRun(LoadNetwork("resnet18-cifar"), LoadDevice("v100-sxm2"), options, source);
}

TEST(LooksLikeCasesCsv, ReadsTheFirstLineThatIsNotAComment) {
  // pollux_t4.csv: four '#' lines, then network,device,precision,...
  EXPECT_TRUE(LooksLikeCasesCsv(Data("cases/pollux_t4.csv")));
  // A training log: model,local_bsz,step_time.
  EXPECT_FALSE(LooksLikeCasesCsv(Data(kLog)));
  const ScratchFile quoted("quoted.csv", "\n# a comment\n\"Network\", DEVICE ,Throughput_SPS\n");
  EXPECT_TRUE(LooksLikeCasesCsv(quoted.path()));
  const ScratchFile no_device("no_device.csv", "network,batch,throughput_sps\n");
  EXPECT_FALSE(LooksLikeCasesCsv(no_device.path()));
  EXPECT_FALSE(LooksLikeCasesCsv("-"));
  EXPECT_FALSE(LooksLikeCasesCsv(Data("no/such/file.csv")));
}

TEST(CalibrateFromRun, TakesTheLogsPrecisionNamesInAnyCase) {
  const TransferRun fp32 = FromLog("precision=Float,network=resnet18-cifar", Precision::kFp32);
  EXPECT_EQ(fp32.source_kind, "log");
  EXPECT_EQ(fp32.precision, Precision::kFp32);
  EXPECT_EQ(fp32.calibration.cases, 11);
  EXPECT_TRUE(fp32.notes.empty());
  // bfloat16 is mixed precision on a GPU's tensor units, where the layout must be stated.
  const TransferRun mixed =
      FromLog("precision=BFloat16,layout=nchw,network=resnet18-cifar", Precision::kMixed);
  EXPECT_EQ(mixed.precision, Precision::kMixed);
  EXPECT_EQ(mixed.layout, ActivationLayout::kNchw);
  // A precision the model does not know names the file, line and field.
  try {
    FromLog("precision=int8,network=resnet18-cifar", Precision::kFp32);
    ADD_FAILURE() << "int8 was taken";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(":5: field 'precision': 'int8' is none of"));
  }
  // Stated as an attribute and contradicting --precision: a usage error.
  EXPECT_THROW(FromLog("precision=half,layout=nchw,network=resnet18-cifar", Precision::kFp32),
               UsageError);
}

TEST(CalibrateFromRun, CasesOfAnotherPrecisionAreLeftOutAndSaidSo) {
  std::ifstream in(Data("cases/pollux_t4.csv"));
  std::stringstream text;
  text << in.rdbuf() << "resnet50,t4,mixed,1,64,300,pytorch,a mixed-precision row\n";
  const ScratchFile cases("cases.csv", text.str());
  DeviceModelOptions options;  // fp32
  TransferSource source;
  source.from = cases.path();
  source.from_device = "t4";
  source.model = "resnet50";
  const TransferRun run =
      CalibrateFromRun(LoadNetwork("resnet50"), LoadDevice("a100"), options, source);
  EXPECT_EQ(run.source_kind, "cases");
  EXPECT_EQ(run.calibration.cases, 8);  // the file's 8 fp32 ResNet-50 rows
  EXPECT_THAT(run.notes,
              ElementsAre("1 case(s) of resnet50 on t4 at another precision than fp32 not used"));
}

}  // namespace
}  // namespace fitspeed
