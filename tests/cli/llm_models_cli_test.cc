// `fitspeed models` with the built-in transformer configurations, and one
// transformer by name, short form or config.json (docs/llm.md, "Models").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LlmModelsCli, JsonListKeepsTheZooAndAddsTransformers) {
  const CliRun run = RunCli("models --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "fitspeed.models/1");
  EXPECT_FALSE(doc["models"].empty());
  ASSERT_EQ(doc["llm_models"].size(), 21u);
  bool found = false;
  for (const auto& m : doc["llm_models"]) {
    if (m["name"] != "mixtral-8x7b") continue;
    found = true;
    // Hugging Face MixtralForCausalLM num_parameters(); active by hand
    // (tests/llm/transformer_test.cc).
    EXPECT_EQ(m["params"], 46702792704);
    EXPECT_EQ(m["active_params"], 12879925248);
    EXPECT_EQ(m["experts"], 8);
    EXPECT_EQ(m["top_k"], 2);
    EXPECT_EQ(m["kv_heads"], 8);
  }
  EXPECT_TRUE(found);
}

TEST(LlmModelsCli, TableListsTransformersAfterTheZoo) {
  const CliRun run = RunCli("models");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t zoo = run.out.find("resnet50");
  const size_t llm = run.out.find("llama-3.1-405b");
  ASSERT_NE(zoo, std::string::npos);
  ASSERT_NE(llm, std::string::npos);
  EXPECT_LT(zoo, llm);
  EXPECT_THAT(run.out, HasSubstr("405853388800"));
}

TEST(LlmModelsCli, CsvOfTransformersIsOneTable) {
  const CliRun run = RunCli("models --llm --output csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("llm_model,architecture,", 0), 0u) << run.out;
  EXPECT_THAT(run.out, HasSubstr("llama-3-8b,llama,32,4096,32/8,14336 gated,128256,-,rope 8192,"
                                 "8030261248,8030261248"));
  EXPECT_THAT(run.out, Not(HasSubstr("resnet50")));
  // Without --llm the CSV is the zoo's table, as before.
  const CliRun zoo = RunCli("models --output csv");
  EXPECT_THAT(zoo.out, Not(HasSubstr("llm_model")));
  EXPECT_THAT(zoo.out, Not(HasSubstr("llama-3-8b")));
}

// FLOPs by hand: tests/llm/transformer_test.cc, Llama3_8bByHand (8192 tokens).
TEST(LlmModelsCli, OneTransformerAsJson) {
  const CliRun run = RunCli("models llama-3-8b --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "fitspeed.llm_model/1");
  EXPECT_EQ(doc["seq_len"], 8192);
  EXPECT_EQ(doc["model"]["params"], 8030261248);
  EXPECT_EQ(doc["model"]["parameters"]["per_layer"], 218112000);
  EXPECT_DOUBLE_EQ(doc["forward_flops_per_token"].get<double>(), 19304284160.0);
  EXPECT_DOUBLE_EQ(doc["train_flops_per_token"].get<double>(), 3 * 19304284160.0);
}

TEST(LlmModelsCli, ZooNameStaysTheZooUnlessLlm) {
  const CliRun zoo = RunCli("models gpt2 --output json");
  ASSERT_EQ(zoo.exit_code, 0) << zoo.err;
  EXPECT_EQ(nlohmann::json::parse(zoo.out)["schema"], "fitspeed.models/1");
  const CliRun llm = RunCli("models gpt2 --llm --output json");
  ASSERT_EQ(llm.exit_code, 0) << llm.err;
  EXPECT_EQ(nlohmann::json::parse(llm.out)["model"]["params"], 124439808);
}

TEST(LlmModelsCli, ShortFormWithSeqLenAndTheLearnedPositionRule) {
  const CliRun run = RunCli(
      "models transformer:layers=2,hidden=64,heads=4,vocab=100,positions=learned,max_positions=16 "
      "--seq-len 8 --output csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("seq_len,8"));
  const CliRun too_long = RunCli("models gpt2 --llm --seq-len 2048");
  EXPECT_EQ(too_long.exit_code, 64);
  EXPECT_THAT(too_long.err, HasSubstr("gpt2 has learned positions for 1024 tokens; sequence 2048 "
                                      "needs a model with RoPE or ALiBi positions"));
}

TEST(LlmModelsCli, ConfigFileAndItsErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/fitspeed_llm_cli_" + std::to_string(getpid()) + ".json";
  std::ofstream(good) << "{\n  \"model_type\": \"mistral\",\n  \"num_hidden_layers\": 2,\n"
                         "  \"hidden_size\": 64,\n  \"num_attention_heads\": 4,\n"
                         "  \"intermediate_size\": 128,\n  \"vocab_size\": 100,\n"
                         "  \"max_position_embeddings\": 256\n}\n";
  const CliRun run = RunCli("models " + good + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // 2*100*64 + 2*(4*64*64 + 3*64*128 + 128) + 64 by hand.
  EXPECT_EQ(nlohmann::json::parse(run.out)["model"]["params"],
            12800 + 2 * (16384 + 24576 + 128) + 64);

  const std::string bad = dir + "/fitspeed_llm_cli_bad_" + std::to_string(getpid()) + ".json";
  std::ofstream(bad) << "{\n  \"model_type\": \"mistral\",\n  \"num_hidden_layers\": \"2\"\n}\n";
  const CliRun data_error = RunCli("models " + bad);
  EXPECT_EQ(data_error.exit_code, 65);
  EXPECT_THAT(data_error.err, HasSubstr(":3: field 'num_hidden_layers': expected an integer"));

  const CliRun missing = RunCli("models " + dir + "/no_such_config.json --llm");
  EXPECT_EQ(missing.exit_code, 66) << missing.err;
  const CliRun unknown = RunCli("models transformer:layers=2,hidden=64,heads=4,vocab=100,x=1");
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_THAT(unknown.err, HasSubstr("unknown key 'x'"));
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace fitspeed::test
