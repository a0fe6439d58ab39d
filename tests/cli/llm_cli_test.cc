// `fitspeed sweep MODEL --tp ...` (one transformer split) and `fitspeed plan
// MODEL --device D ...` (every split, ranked): docs/llm.md, "The CLI".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace fitspeed::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr int kUsage = 64;  // tools/fitspeed/exit_code.h, ExitCode::kUsage

const char* kSplit =
    "sweep llama-2-7b --device h100 --devices 8 --tp 2 --pp 2 --micro-batch 2 --global-batch 64 "
    "--seq-len 4096 --recompute selective --sequence-parallel --zero 1";

TEST(LlmCli, SweepJsonHasEveryField) {
  const CliRun run = RunCli(std::string(kSplit) + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "fitspeed.llm-step/1");
  for (const char* key :
       {"step_time_s", "step_time_s_low", "step_time_s_high", "throughput_sps", "tokens_per_s",
        "tokens_per_s_low", "tokens_per_s_high", "mfu", "memory_bytes", "fits", "interval", "split",
        "parts", "memory", "notes", "model", "cluster", "calibration"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  for (const char* key : {"level", "low_factor", "high_factor", "basis", "available", "reason"}) {
    EXPECT_TRUE(doc["interval"].contains(key)) << key;
  }
  const json& split = doc["split"];
  for (const char* key : {"tp", "pp", "vp", "cp", "ep", "dp", "micro_batch", "global_batch",
                          "accumulation", "recompute", "sequence_parallel", "zero"}) {
    EXPECT_TRUE(split.contains(key)) << key;
  }
  // dp = 8 / (2 x 2); accumulation = 64 / (2 x 2).
  EXPECT_EQ(split["dp"], 2);
  EXPECT_EQ(split["accumulation"], 16);
  EXPECT_EQ(split["recompute"], "selective");
  EXPECT_EQ(split["sequence_parallel"], true);
  EXPECT_EQ(split["zero"], 1);
  double parts = 0;
  for (const char* key :
       {"compute_s", "recompute_s", "tensor_comm_s", "context_comm_s", "expert_comm_s",
        "pipeline_comm_s", "bubble_s", "data_comm_s", "optimizer_s", "overhead_s"}) {
    ASSERT_TRUE(doc["parts"].contains(key)) << key;
    parts += doc["parts"][key].get<double>();
  }
  const double step = doc["step_time_s"].get<double>();
  EXPECT_NEAR(parts, step, 1e-9 * step);
  double memory = 0;
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "logits", "workspace",
                          "fragmentation"}) {
    ASSERT_TRUE(doc["memory"].contains(key)) << key;
    memory += doc["memory"][key].get<double>();
  }
  const double total = doc["memory"]["total"].get<double>();
  EXPECT_NEAR(memory, total, 1e-9 * total);
  EXPECT_EQ(doc["memory_bytes"].get<double>(), total);
  EXPECT_TRUE(doc["memory"].contains("capacity"));
  EXPECT_TRUE(doc["memory"].contains("shortfall"));
  // 64 sequences of 4096 tokens per step.
  EXPECT_NEAR(doc["throughput_sps"].get<double>(), 64 / step, 1e-9 * 64 / step);
  EXPECT_NEAR(doc["tokens_per_s"].get<double>(), 4096 * 64 / step, 1e-9 * 4096 * 64 / step);
  EXPECT_EQ(doc["model"]["name"], "llama-2-7b");
  EXPECT_EQ(doc["model"]["parameters"], 6738415616);
  EXPECT_EQ(doc["cluster"]["device"], "h100");
  EXPECT_EQ(doc["cluster"]["devices"], 8);
  ASSERT_EQ(doc["cluster"]["links"].size(), 2u);
  EXPECT_FALSE(doc["cluster"]["links"][0]["source"].get<std::string>().empty());
  EXPECT_FALSE(doc["calibration"]["source"].get<std::string>().empty());
  const double mfu = doc["mfu"].get<double>();
  EXPECT_GT(mfu, 0);
  EXPECT_LT(mfu, 1);
}

TEST(LlmCli, SweepTableAndCsv) {
  const CliRun table = RunCli(kSplit);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("step time (ms)"));
  EXPECT_THAT(table.out, HasSubstr("bubble"));
  EXPECT_THAT(table.out, HasSubstr("activations"));
  EXPECT_THAT(table.out, HasSubstr("assumptions:"));
  const CliRun csv = RunCli(std::string(kSplit) + " --output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("model,device,devices,seq_len,framework,tp,", 0), 0u) << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2);  // header and one split
}

TEST(LlmCli, SplitThatDoesNotDivideIsRefused) {
  // Llama-2-7B has 32 heads: tp 3 does not divide them.
  const CliRun run =
      RunCli("sweep llama-2-7b --device h100 --devices 3 --tp 3 --seq-len 4096 --output json");
  EXPECT_EQ(run.exit_code, kUsage);
  EXPECT_THAT(run.err, HasSubstr("does not divide the 32 attention heads"));
  // 8 devices, tp x pp = 3 x 1 leaves a remainder.
  const CliRun devices = RunCli(
      "sweep llama-2-7b --device h100 --devices 8 --tp 4 --pp 4 "
      "--seq-len 4096");
  EXPECT_EQ(devices.exit_code, kUsage);
  EXPECT_THAT(devices.err, HasSubstr("devices"));
}

TEST(LlmCli, Fp8WeightsHoldTheBaseInOneBytePerWeight) {
  // Llama-2-7B at tp 8 with FP8 products: 16-bit weights and FP8 copies (3
  // bytes per weight), or the FP8 weights alone (1 byte): the weights' memory
  // falls to a third, the step time does not change.
  const std::string common =
      "sweep llama-2-7b --device h100 --devices 8 --tp 8 --seq-len 4096 --micro-batch 1 "
      "--global-batch 8 --precision fp8 --output json";
  const CliRun copies = RunCli(common);
  const CliRun alone = RunCli(common + " --fp8-weights");
  ASSERT_EQ(copies.exit_code, 0) << copies.err;
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const auto a = nlohmann::json::parse(copies.out);
  const auto b = nlohmann::json::parse(alone.out);
  EXPECT_NEAR(b["memory"]["weights"].get<double>() / a["memory"]["weights"].get<double>(),
              1.0 / 3.0, 1e-9);
  EXPECT_EQ(b["training"]["fp8_weights"], true);
  EXPECT_EQ(a["training"]["fp8_weights"], false);
  EXPECT_DOUBLE_EQ(b["step_time_s"].get<double>(), a["step_time_s"].get<double>());
}

TEST(LlmCli, DropoutOffDropsTwoMaskBytesPerHiddenElement) {
  // GPT-3 175B at tp 8 with sequence parallelism, one stage of 96 layers,
  // micro-batch 1 of 2,048 tokens: dropout's two 1-byte hidden masks are
  // 2 s b h / t per layer (Korthikanti et al.'s 34 -> 32), so turning it off
  // saves 96 x 2 x 2048 x 12288 / 8 = 603,979,776 bytes of activations.
  const std::string common =
      "sweep gpt3-175b --device h100 --devices 8 --tp 8 --sequence-parallel --recompute "
      "selective --seq-len 2048 --micro-batch 1 --global-batch 1 --output json";
  const CliRun on = RunCli(common);
  const CliRun off = RunCli(common + " --dropout off");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto a = nlohmann::json::parse(on.out);
  const auto b = nlohmann::json::parse(off.out);
  EXPECT_EQ(a["model"]["dropout"], true);  // gpt3-175b is a GPT-2 config: 0.1 by default
  EXPECT_EQ(b["model"]["dropout"], false);
  EXPECT_NEAR(a["memory"]["activations"].get<double>() - b["memory"]["activations"].get<double>(),
              603979776.0, 1.0);
  EXPECT_LT(b["step_time_s"].get<double>(), a["step_time_s"].get<double>());
  const CliRun bad = RunCli("sweep gpt3-175b --device h100 --tp 8 --seq-len 2048 --dropout maybe");
  EXPECT_EQ(bad.exit_code, kUsage);
  EXPECT_THAT(bad.err, HasSubstr("--dropout"));
  // LoRA's adapter dropout without adapters.
  const CliRun lora = RunCli("sweep gpt3-175b --device h100 --tp 8 --seq-len 2048 --lora-dropout");
  EXPECT_EQ(lora.exit_code, kUsage);
  EXPECT_THAT(lora.err, HasSubstr("--lora-rank"));
}

TEST(LlmCli, ActivationFp8StoreHalvesTheSwigluInputAndIsRefusedWithoutOne) {
  // Llama-2-7B at tp 8, one micro-batch of 4,096 tokens: the SwiGLU's input
  // is 2 x 11,008 / 8 = 2,752 wide on each GPU, so keeping it in FP8 saves
  // 32 layers x 4,096 x 2,752 x 1 byte = 360,710,144 bytes of activations.
  const std::string common =
      "sweep llama-2-7b --device h100 --devices 8 --tp 8 --seq-len 4096 --output json";
  const CliRun bf16 = RunCli(common);
  const CliRun fp8 = RunCli(common + " --activation-fp8-store");
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const auto a = nlohmann::json::parse(bf16.out);
  const auto b = nlohmann::json::parse(fp8.out);
  EXPECT_EQ(b["training"]["activation_fp8_store"], true);
  EXPECT_EQ(a["training"]["activation_fp8_store"], false);
  EXPECT_NEAR(a["memory"]["activations"].get<double>() - b["memory"]["activations"].get<double>(),
              360710144.0, 1.0);
  // GPT-3's feed-forward is GELU, not gated: exit 64, naming the option.
  const CliRun gelu =
      RunCli("sweep gpt3-175b --device h100 --tp 8 --seq-len 2048 --activation-fp8-store");
  EXPECT_EQ(gelu.exit_code, kUsage);
  EXPECT_THAT(gelu.err, HasSubstr("--activation-fp8-store"));
  // plan takes it too.
  const CliRun plan = RunCli(
      "plan llama-2-7b --device h100 --devices 8 --global-batch 8 --seq-len 4096 --top 1 "
      "--activation-fp8-store --output json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["training"]["activation_fp8_store"], true);
}

TEST(LlmCli, BadOptionsAreRefused) {
  const CliRun zero = RunCli("sweep llama-2-7b --device h100 --tp 0 --seq-len 4096");
  EXPECT_EQ(zero.exit_code, kUsage);
  EXPECT_THAT(zero.err, HasSubstr("--tp"));
  // The A100 has no FP8 matrix units in its catalog entry.
  const CliRun fp8 =
      RunCli("sweep llama-2-7b --device a100 --devices 8 --tp 8 --seq-len 4096 --precision fp8");
  EXPECT_EQ(fp8.exit_code, kUsage);
  EXPECT_THAT(fp8.err, HasSubstr("fp8"));
  const CliRun fp8_weights =
      RunCli("sweep llama-2-7b --device h100 --devices 8 --tp 8 --seq-len 4096 --fp8-weights");
  EXPECT_EQ(fp8_weights.exit_code, kUsage);
  EXPECT_THAT(fp8_weights.err, HasSubstr("--precision fp8"));
  const CliRun zoo = RunCli("sweep resnet50 --device h100 --tp 2 --seq-len 128");
  EXPECT_EQ(zoo.exit_code, kUsage);
  EXPECT_THAT(zoo.err, HasSubstr("zoo network"));
  const CliRun no_device = RunCli("sweep llama-2-7b --tp 2 --seq-len 4096");
  EXPECT_EQ(no_device.exit_code, kUsage);
  EXPECT_THAT(no_device.err, HasSubstr("--device"));
  const CliRun no_seq = RunCli("sweep llama-2-7b --device h100 --tp 2");
  EXPECT_EQ(no_seq.exit_code, kUsage);
  EXPECT_THAT(no_seq.err, HasSubstr("--seq-len"));
}

TEST(LlmCli, Gpt2WithoutSplitOptionsStaysOnTheZooPath) {
  // The zoo path's exit code is its fit's: 0, or 1 when the fit is unusable.
  const CliRun zoo = RunCli("sweep gpt2 --device h100 --batches 1:64 --output json");
  ASSERT_TRUE(zoo.exit_code == 0 || zoo.exit_code == 1) << zoo.err;
  const json doc = json::parse(zoo.out);
  EXPECT_NE(doc.value("schema", ""), "fitspeed.llm-step/1");
  EXPECT_TRUE(doc.contains("steps"));
  EXPECT_TRUE(doc.contains("fits"));
  // With a split option gpt2 is the built-in transformer.
  const CliRun llm = RunCli("sweep gpt2 --device h100 --tp 2 --seq-len 1024 --output json");
  ASSERT_EQ(llm.exit_code, 0) << llm.err;
  EXPECT_EQ(json::parse(llm.out)["schema"], "fitspeed.llm-step/1");
}

TEST(LlmCli, SplitThatDoesNotFitReportsItsShortfall) {
  // Llama-2-70B in 16-bit weights alone is 138 GB on each of 8 data-parallel H100s (80 GB).
  const CliRun run = RunCli(
      "sweep llama-2-70b --device h100 --devices 8 --micro-batch 1 --global-batch 8 --seq-len "
      "4096 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_FALSE(doc["fits"].get<bool>());
  const double shortfall = doc["memory"]["shortfall"].get<double>();
  EXPECT_GT(shortfall, 0);
  EXPECT_NEAR(shortfall,
              doc["memory"]["total"].get<double>() - doc["memory"]["capacity"].get<double>(),
              1e-6 * shortfall);
}

TEST(LlmCli, LinksFileReplacesTheNetworkLink) {
  const std::string links = ::testing::TempDir() + "/llm_cli_links.json";
  const CliRun bench = RunCli("linkbench --from " + Data("links/nccl_tests_all_reduce_2x4.txt") +
                              " --links-out " + links);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  const json file = json::parse(ReadFile(links));
  const CliRun run = RunCli(
      "sweep llama-2-7b --device h100 --devices 16 --tp 8 --seq-len 4096 "
      "--links " +
      links + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json network = json::parse(run.out)["cluster"]["links"][1];
  EXPECT_EQ(network["connects"], "network");
  EXPECT_EQ(network["bandwidth_bytes_per_s"], file["links"][0]["bandwidth_bytes_per_s"]["value"]);
  EXPECT_THAT(network["source"].get<std::string>(), HasSubstr("linkbench"));
  std::remove(links.c_str());
}

const char* kPlan =
    "plan llama-2-7b --device h100 --devices 16 --global-batch 64 --seq-len 4096 --top 5";

TEST(LlmCli, PlanRanksFittingSplitsFastestFirst) {
  const CliRun run = RunCli(std::string(kPlan) + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "fitspeed.llm-plan/1");
  const json& ranked = doc["ranked"];
  ASSERT_FALSE(ranked.empty());
  EXPECT_LE(ranked.size(), 5u);
  for (size_t i = 0; i < ranked.size(); ++i) {
    EXPECT_EQ(ranked[i]["rank"], i + 1);
    EXPECT_TRUE(ranked[i]["fits"].get<bool>());
    EXPECT_LE(ranked[i]["memory_bytes"].get<double>(),
              ranked[i]["memory"]["capacity"].get<double>());
    if (i > 0) {
      EXPECT_LE(ranked[i - 1]["step_time_s"].get<double>(), ranked[i]["step_time_s"].get<double>());
    }
    const json& s = ranked[i]["split"];
    EXPECT_EQ(s["tp"].get<int>() * s["pp"].get<int>() * s["cp"].get<int>() * s["dp"].get<int>(),
              16);
  }
  const json& search = doc["search"];
  EXPECT_GE(search["evaluated"].get<int64_t>(), search["fitting"].get<int64_t>());
  EXPECT_GE(search["fitting"].get<int64_t>(), static_cast<int64_t>(ranked.size()));
  EXPECT_TRUE(search.contains("configurations_per_s"));
}

TEST(LlmCli, PlanRespectsFix) {
  const CliRun run = RunCli(std::string(kPlan) +
                            " --fix tp=4,pp=2,cp=1,mb=1,recompute=full,sp=1,zero=1 "
                            "--output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  ASSERT_FALSE(doc["ranked"].empty());
  for (const char* list : {"ranked", "not_fitting"}) {
    for (const json& step : doc[list]) {
      const json& s = step["split"];
      EXPECT_EQ(s["tp"], 4);
      EXPECT_EQ(s["pp"], 2);
      EXPECT_EQ(s["cp"], 1);
      EXPECT_EQ(s["dp"], 2);  // 16 / (4 x 2 x 1)
      EXPECT_EQ(s["micro_batch"], 1);
      EXPECT_EQ(s["recompute"], "full");
      EXPECT_EQ(s["sequence_parallel"], true);
      EXPECT_EQ(s["zero"], 1);
    }
  }
  const CliRun bad = RunCli(std::string(kPlan) + " --fix tq=4");
  EXPECT_EQ(bad.exit_code, kUsage);
  EXPECT_THAT(bad.err, HasSubstr("tq"));
}

TEST(LlmCli, PlanReportsSplitsThatDoNotFit) {
  // Llama-2-70B on 8 H100s: without tensor or pipeline parallelism the 16-bit
  // weights alone (138 GB) exceed 80 GB.
  const CliRun run = RunCli(
      "plan llama-2-70b --device h100 --devices 8 --global-batch 8 --seq-len 4096 --fix "
      "tp=1,pp=1,zero=0 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_TRUE(doc["ranked"].empty());
  ASSERT_FALSE(doc["not_fitting"].empty());
  for (const json& step : doc["not_fitting"]) {
    EXPECT_FALSE(step["fits"].get<bool>());
    EXPECT_GT(step["memory"]["shortfall"].get<double>(), 0);
  }
  const CliRun table = RunCli(
      "plan llama-2-70b --device h100 --devices 8 --global-batch 8 --seq-len 4096 --fix "
      "tp=1,pp=1,zero=0");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("do not fit"));
  EXPECT_THAT(table.out, HasSubstr("short GB"));
}

TEST(LlmCli, PlanTokensGiveDaysAndCost) {
  const CliRun run = RunCli(std::string(kPlan) + " --tokens 2e10 --price 3 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  ASSERT_FALSE(doc["ranked"].empty());
  for (const json& step : doc["ranked"]) {
    // days = tokens / (tokens/s) / 86400: at 1e6 tokens/s, 2e10 tokens take
    // 2e4 s = 0.2315 days; cost = 3 per device-hour x 16 devices x 2e4/3600 h = 266.7.
    const double tokens_per_s = step["tokens_per_s"].get<double>();
    const double days = 2e10 / tokens_per_s / 86400;
    const json& run_totals = step["run"];
    EXPECT_NEAR(run_totals["days"].get<double>(), days, 1e-12 * days);
    EXPECT_NEAR(run_totals["cost"].get<double>(), 3 * 16 * days * 24, 1e-9 * 3 * 16 * days * 24);
    EXPECT_LE(run_totals["days_low"].get<double>(), days);
    EXPECT_GE(run_totals["days_high"].get<double>(), days);
  }
  const CliRun table = RunCli(std::string(kPlan) + " --tokens 2e10 --price 3");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("days [low, high]"));
  EXPECT_THAT(table.out, HasSubstr("configurations/s"));
}

TEST(LlmCli, PlanOptionsNeedDevice) {
  const CliRun run = RunCli("plan --v0 100 --t 0.1 --samples 1000 --epochs 1 --global-batch 8");
  EXPECT_EQ(run.exit_code, kUsage);
  EXPECT_THAT(run.err, HasSubstr("--device"));
  const CliRun law = RunCli(std::string(kPlan) + " --deadline 1h");
  EXPECT_EQ(law.exit_code, kUsage);
  EXPECT_THAT(law.err, HasSubstr("--deadline"));
  const CliRun fp8 = RunCli(
      "plan llama-2-7b --device a100 --devices 8 --global-batch 64 --seq-len 4096 --precision fp8");
  EXPECT_EQ(fp8.exit_code, kUsage);
  EXPECT_THAT(fp8.err, HasSubstr("fp8"));
}

TEST(LlmCli, FrameworkSetsTheStepItsDefaultsAndTheSplitsSearched) {
  // FSDP over Hugging Face modules: its FULL_SHARD default (zero 3), 16-bit
  // gradients, eager kernels, named in the JSON, the notes and the CSV; the
  // default is Megatron's, said as such.
  const std::string step =
      "sweep llm llama-2-7b --device h200 --devices 8 --seq-len 4096 --output json";
  const CliRun fsdp = RunCli(step + " --framework fsdp");
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.err;
  const json doc = json::parse(fsdp.out);
  EXPECT_EQ(doc["training"]["framework"], "fsdp");
  EXPECT_EQ(doc["training"]["gradient_bytes"], 2);
  EXPECT_EQ(doc["split"]["zero"], 3);
  EXPECT_THAT(doc["notes"][0].get<std::string>(), HasSubstr("framework fsdp"));
  EXPECT_THAT(doc["interval"]["basis"].get<std::string>(), HasSubstr("framework fsdp"));
  const CliRun megatron = RunCli(step);
  ASSERT_EQ(megatron.exit_code, 0) << megatron.err;
  const json plain = json::parse(megatron.out);
  EXPECT_EQ(plain["training"]["framework"], "megatron");
  EXPECT_EQ(plain["split"]["zero"], 0);
  EXPECT_THAT(plain["notes"][0].get<std::string>(), HasSubstr("the default"));
  // Eager element-wise kernels cost the same FLOPs more time.
  EXPECT_GT(doc["parts"]["compute_s"].get<double>(), plain["parts"]["compute_s"].get<double>());
  const CliRun csv = RunCli(
      "sweep llm llama-2-7b --device h200 --devices 8 --seq-len 4096 --framework fsdp2 "
      "--output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("llama-2-7b,h200,8,4096,fsdp2,"));
  // What the framework does not run is refused, and not searched.
  const CliRun tp = RunCli(step + " --framework fsdp --tp 2");
  EXPECT_EQ(tp.exit_code, kUsage);
  EXPECT_THAT(tp.err, HasSubstr("does not run tensor parallelism (tp 2)"));
  const CliRun unknown = RunCli(step + " --framework pytorch");
  EXPECT_EQ(unknown.exit_code, kUsage);
  EXPECT_THAT(unknown.err, HasSubstr("expected one of megatron"));
  const CliRun plan = RunCli(std::string(kPlan) + " --framework fsdp --output json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const json ranked = json::parse(plan.out)["ranked"];
  ASSERT_FALSE(ranked.empty());
  for (const json& r : ranked) {
    EXPECT_EQ(r["split"]["tp"], 1);
    EXPECT_EQ(r["split"]["pp"], 1);
    EXPECT_NE(r["split"]["zero"], 1);
  }
  const CliRun help = RunCli("plan llm --help");
  EXPECT_THAT(help.out, HasSubstr("fsdp2-compile"));
  // Hybrid sharding fixed for the plan: every split listed shards over 8.
  const CliRun hsdp = RunCli(std::string(kPlan) + " --framework fsdp --fix shard=8 --output json");
  ASSERT_EQ(hsdp.exit_code, 0) << hsdp.err;
  const json hsdp_doc = json::parse(hsdp.out);  // kept alive: the loop reads into it
  for (const json& r : hsdp_doc["ranked"]) EXPECT_EQ(r["split"]["shard_group"], 8);
  const CliRun shard = RunCli(step + " --framework fsdp --shard-group 3");
  EXPECT_EQ(shard.exit_code, kUsage);
  EXPECT_THAT(shard.err, HasSubstr("does not divide"));
}

}  // namespace
}  // namespace fitspeed::test
