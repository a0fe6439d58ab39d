#include "fitspeed/core/precision.h"

#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

// The names every output prints (docs/devices.md, docs/timing.md): a device's
// mixed precision is "mixed", the host's is its BF16.
TEST(Precision, NamesDependOnlyOnTheContext) {
  EXPECT_STREQ(PrecisionName(Precision::kFp32), "fp32");
  EXPECT_STREQ(PrecisionName(Precision::kTf32), "tf32");
  EXPECT_STREQ(PrecisionName(Precision::kMixed), "mixed");
  EXPECT_STREQ(PrecisionName(Precision::kFp8), "fp8");
  EXPECT_STREQ(PrecisionName(Precision::kMixed, PrecisionContext::kLog), "mixed");
  EXPECT_STREQ(PrecisionName(Precision::kFp32, PrecisionContext::kHost), "fp32");
  EXPECT_STREQ(PrecisionName(Precision::kMixed, PrecisionContext::kHost), "bf16");
}

TEST(Precision, EachNameParsesBackToItsValue) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kMixed, Precision::kFp8}) {
    EXPECT_EQ(ParsePrecision(PrecisionName(p), PrecisionContext::kDevice), p);
    EXPECT_EQ(ParsePrecision(PrecisionName(p), PrecisionContext::kLog), p);
  }
  for (Precision p : {Precision::kFp32, Precision::kMixed}) {
    EXPECT_EQ(ParsePrecision(PrecisionName(p, PrecisionContext::kHost), PrecisionContext::kHost),
              p);
  }
}

TEST(Precision, EachContextTakesItsOwnSpellingsOnly) {
  // The device's options and the cases CSV: exactly fp32, tf32, mixed.
  EXPECT_THROW(ParsePrecision("bf16", PrecisionContext::kDevice), UsageError);
  EXPECT_THROW(ParsePrecision("float32", PrecisionContext::kDevice), UsageError);
  EXPECT_THROW(ParsePrecision("Mixed", PrecisionContext::kDevice), UsageError);
  // The host: fp32 (float32) and bf16 (bfloat16); not a device's names.
  EXPECT_EQ(ParsePrecision("float32", PrecisionContext::kHost), Precision::kFp32);
  EXPECT_EQ(ParsePrecision("bfloat16", PrecisionContext::kHost), Precision::kMixed);
  EXPECT_THROW(ParsePrecision("mixed", PrecisionContext::kHost), UsageError);
  EXPECT_THROW(ParsePrecision("fp16", PrecisionContext::kHost), UsageError);
  // Logs: any case, the frameworks' names of the 16-bit types and AMP.
  for (const char* name : {"AMP", "fp16", "BF16", "float16", "bfloat16", "half", "Mixed"}) {
    EXPECT_EQ(ParsePrecision(name, PrecisionContext::kLog), Precision::kMixed) << name;
  }
  for (const char* name : {"FP32", "float32", "float"}) {
    EXPECT_EQ(ParsePrecision(name, PrecisionContext::kLog), Precision::kFp32) << name;
  }
  EXPECT_EQ(ParsePrecision("TF32", PrecisionContext::kLog), Precision::kTf32);
  EXPECT_EQ(ParsePrecision("Float8", PrecisionContext::kLog), Precision::kFp8);
  EXPECT_EQ(ParsePrecision("FP8", PrecisionContext::kLog), Precision::kFp8);
}

TEST(Precision, RefusalsNameTheContextAndItsNames) {
  try {
    ParsePrecision("fp4", PrecisionContext::kDevice);
    FAIL() << "fp4 parsed";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown device precision 'fp4' (known: fp32, tf32, mixed, fp8)");
  }
  try {
    ParsePrecision("fp8", PrecisionContext::kHost);
    FAIL() << "fp8 parsed on the host";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "precision fp8: the host cannot run it (it runs fp32, bf16)");
  }
  try {
    ParsePrecision("tf32", PrecisionContext::kHost);
    FAIL() << "tf32 parsed on the host";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "precision tf32: the host cannot run it (it runs fp32, bf16)");
  }
  try {
    ParsePrecision("int8", PrecisionContext::kHost);
    FAIL() << "int8 parsed on the host";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown host precision 'int8' (known: fp32, bf16)");
  }
}

}  // namespace
}  // namespace fitspeed
