#include "fitspeed/model/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

TEST(ModelsReport, JsonListsPublishedParameterCounts) {
  std::vector<ModelSummary> models;
  for (const ZooEntry& entry : ZooEntries()) models.push_back(Summarize(ZooNetwork(entry.name)));
  std::ostringstream out;
  WriteModels(out, models, OutputFormat::kJson);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc.at("schema"), "fitspeed.models/1");
  // 7 + efficientnet-b0, alexnet, googlenet, vgg19 + 6 transformers.
  ASSERT_EQ(doc.at("models").size(), 17u);
  const nlohmann::json& wrn = doc.at("models").at(6);
  // Keras's count (fitspeed issue 3): 103,465,028 parameters, 103,452,484 trainable.
  EXPECT_EQ(wrn.at("name"), "wrn-k7n4-7x7");
  EXPECT_EQ(wrn.at("params").get<int64_t>(), 103465028);
  EXPECT_EQ(wrn.at("trainable_params").get<int64_t>(), 103452484);
  // mlp-mnist forward by hand (network_cost_test.cc): 1,339,442 FLOPs per sample.
  EXPECT_DOUBLE_EQ(doc.at("models").at(0).at("forward_flops_per_sample").get<double>(), 1339442.0);
  // A training sample costs more than a forward pass and less than four.
  for (const nlohmann::json& m : doc.at("models")) {
    const double forward = m.at("forward_flops_per_sample").get<double>();
    const double train = m.at("train_flops_per_sample").get<double>();
    EXPECT_GT(train, 2 * forward) << m.at("name");
    EXPECT_LT(train, 4 * forward) << m.at("name");
  }
  // Per token for sequence models only: gpt2 at its 1024 tokens.
  const nlohmann::json& gpt2 = doc.at("models").at(13);
  ASSERT_EQ(gpt2.at("name"), "gpt2");
  EXPECT_EQ(gpt2.at("tokens_per_sample").get<int64_t>(), 1024);
  EXPECT_DOUBLE_EQ(gpt2.at("train_flops_per_token").get<double>(),
                   gpt2.at("train_flops_per_sample").get<double>() / 1024);
  EXPECT_TRUE(wrn.at("tokens_per_sample").is_null());
}

TEST(ModelsReport, TableHasOneRowPerModel) {
  std::ostringstream out;
  WriteModels(out, {Summarize(ZooNetwork("vgg16"))}, OutputFormat::kTable);
  const std::string text = out.str();
  EXPECT_NE(text.find("138357544"), std::string::npos) << text;  // published VGG-16 count
  EXPECT_NE(text.find("3x224x224"), std::string::npos) << text;
  std::ostringstream csv;
  WriteModels(csv, {Summarize(ZooNetwork("vgg16"))}, OutputFormat::kCsv);
  EXPECT_EQ(csv.str().rfind("model,input,classes,params,trainable", 0), 0u) << csv.str();
}

TEST(ModelsReport, LayersOfOneNetwork) {
  const Network net = ZooNetwork("mlp-mnist");
  std::ostringstream out;
  WriteModelLayers(out, net, OutputFormat::kJson, Optimizer::kAdam);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  const nlohmann::json& model = doc.at("models").at(0);
  EXPECT_EQ(model.at("optimizer"), "adam");
  ASSERT_EQ(model.at("layers").size(), 6u);  // 3 dense, 2 relu, the loss
  const nlohmann::json& dense1 = model.at("layers").at(0);
  EXPECT_EQ(dense1.at("name"), "dense_1");
  EXPECT_EQ(dense1.at("params").get<int64_t>(), 784 * 512 + 512);
  EXPECT_DOUBLE_EQ(dense1.at("forward_flops_per_sample").get<double>(), 2.0 * 784 * 512 + 512);
  EXPECT_DOUBLE_EQ(dense1.at("update_flops_per_step").get<double>(), 12.0 * (784 * 512 + 512));

  std::ostringstream table;
  WriteModelLayers(table, net, OutputFormat::kTable);
  EXPECT_NE(table.str().find("dense_3"), std::string::npos);
  EXPECT_NE(table.str().find("669706"), std::string::npos);  // the total row
}

}  // namespace
}  // namespace fitspeed
