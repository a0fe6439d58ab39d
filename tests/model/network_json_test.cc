#include "fitspeed/model/network_json.h"

#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

const std::string kModels = std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/models/";

// The DataError message of parsing `text`, or "" when it parses.
std::string ParseError(const std::string& text) {
  try {
    ParseNetworkJson(text, "net.json");
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

// A valid network with `middle` (a layer line) between a conv and the head;
// the conv is on line 3, `middle` on line 4.
std::string WithLayer(const std::string& middle) {
  return "{\"input\": [3, 8, 8],\n"
         " \"layers\": [\n"
         "  {\"name\": \"c\", \"kind\": \"conv2d\", \"filters\": 4, \"kernel\": 3},\n" +
         middle +
         ",\n"
         "  {\"kind\": \"global_avg_pool\"}, {\"kind\": \"dense\", \"units\": 2},\n"
         "  {\"kind\": \"softmax_cross_entropy\"}]}\n";
}

TEST(NetworkJson, ExampleEqualsTheZooNetwork) {
  // data/models/cnn-cifar-small.json writes Keras's cifar10_cnn.py example,
  // 1,250,858 parameters by its model.summary().
  const Network json = ReadNetworkJsonFile(kModels + "cnn-cifar-small.json");
  EXPECT_EQ(json.ParamCount(), 1250858);
  const Network zoo = ZooNetwork("cnn-cifar-small");
  ASSERT_EQ(json.size(), zoo.size());
  for (int i = 0; i < zoo.size(); ++i) {
    EXPECT_EQ(json.layer(i).output_shape, zoo.layer(i).output_shape) << zoo.layer(i).name;
  }
  EXPECT_DOUBLE_EQ(CountCost(json).TrainFlopsPerSample(), CountCost(zoo).TrainFlopsPerSample());
}

TEST(NetworkJson, ResidualExampleByHand) {
  const Network net = ReadNetworkJsonFile(kModels + "tiny-resnet.json");
  // stem 3*16*9 = 432, block convs 16*32*9 = 4,608 and 32*32*9 = 9,216,
  // shortcut 16*32 = 512, fc 32*10 + 10 = 330; batch-norms 4*(16+32+32+32) = 448.
  EXPECT_EQ(net.ParamCount(), 432 + 4608 + 9216 + 512 + 330 + 448);
  EXPECT_EQ(net.TrainableParamCount(), 432 + 4608 + 9216 + 512 + 330 + 224);
  // Stride 2 with padding 1 on 32: floor((32 + 2 - 3)/2) + 1 = 16; the 1x1
  // stride-2 shortcut: floor((32 - 1)/2) + 1 = 16.
  EXPECT_EQ(net.layer(net.LayerId("block_add")).output_shape, Shape::Chw(32, 16, 16));
  EXPECT_DOUBLE_EQ(net.layer(net.LayerId("stem_bn")).batch_norm.epsilon, 1e-5);
}

TEST(NetworkJson, RoundTripKeepsEveryZooNetwork) {
  for (const ZooEntry& entry : ZooEntries()) {
    const Network zoo = ZooNetwork(entry.name);
    const Network back = ParseNetworkJson(NetworkToJson(zoo), "round-trip");
    ASSERT_EQ(back.size(), zoo.size()) << entry.name;
    EXPECT_EQ(back.ParamCount(), zoo.ParamCount()) << entry.name;
    EXPECT_EQ(back.TrainableParamCount(), zoo.TrainableParamCount()) << entry.name;
    EXPECT_EQ(NetworkToJson(back), NetworkToJson(zoo)) << entry.name;
  }
}

TEST(NetworkJson, RoundTripKeepsUnpaddedSequences) {
  ZooOptions options;
  options.seq_len = 512;
  options.mean_tokens = 254.43;
  options.mean_square_tokens = 86312;
  const Network zoo = ZooNetwork("bert-base", options);
  const Network back = ParseNetworkJson(NetworkToJson(zoo), "round-trip");
  EXPECT_DOUBLE_EQ(back.mean_square_tokens, 86312);
  EXPECT_DOUBLE_EQ(CountCost(back).TrainFlopsPerSample(), CountCost(zoo).TrainFlopsPerSample());
  std::string text = NetworkToJson(zoo);
  text.replace(text.find("86312"), 5, "-1");
  try {
    ParseNetworkJson(text, "net.json");
    ADD_FAILURE() << "a negative mean_square_tokens was read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("mean_square_tokens"), std::string::npos) << e.what();
  }
}

TEST(NetworkJson, DefaultsFollowKerasAndPyTorch) {
  const Network net = ParseNetworkJson(WithLayer("  {\"name\": \"p\", \"kind\": \"max_pool\", "
                                                 "\"kernel\": 2}"),
                                       "net.json");
  // conv 3x3 valid: 8 -> 6; pooling stride defaults to the kernel: 6 -> 3.
  EXPECT_EQ(net.layer(net.LayerId("c")).output_shape, Shape::Chw(4, 6, 6));
  EXPECT_EQ(net.layer(net.LayerId("p")).output_shape, Shape::Chw(4, 3, 3));
  EXPECT_TRUE(net.layer(net.LayerId("c")).conv.bias);
  // Unnamed layers get "<kind>_<index>" and read the layer before them.
  EXPECT_EQ(net.layer(3).name, "global_avg_pool_3");
  EXPECT_EQ(net.layer(3).inputs, std::vector<std::string>{"p"});
}

TEST(NetworkJsonErrors, BadKindNamesLayerAndLine) {
  const std::string message = ParseError(WithLayer("  {\"name\": \"x\", \"kind\": \"conv3d\"}"));
  EXPECT_EQ(message.rfind("net.json:4: field 'layers[2] \"x\".kind'", 0), 0u) << message;
  EXPECT_NE(message.find("unknown kind \"conv3d\""), std::string::npos) << message;
}

TEST(NetworkJsonErrors, AddShapeMismatchNamesLayerAndLine) {
  // c is 4x6x6, the input 3x8x8.
  const std::string message =
      ParseError(WithLayer("  {\"name\": \"sum\", \"kind\": \"add\", \"inputs\": [\"c\", "
                           "\"input\"]}"));
  EXPECT_EQ(message.rfind("net.json:4: field 'layers[2] \"sum\"'", 0), 0u) << message;
  EXPECT_NE(message.find("shape mismatch: input 'c' is 4x6x6 but input 'input' is 3x8x8"),
            std::string::npos)
      << message;
}

TEST(NetworkJsonErrors, UnknownInputNamesLayerAndLine) {
  const std::string message =
      ParseError(WithLayer("  {\"name\": \"r\", \"kind\": \"relu\", \"input\": \"conv9\"}"));
  EXPECT_EQ(message.rfind("net.json:4: field 'layers[2] \"r\"'", 0), 0u) << message;
  EXPECT_NE(message.find("unknown input 'conv9'"), std::string::npos) << message;
}

TEST(NetworkJsonErrors, FieldsAreChecked) {
  const auto expect = [](const std::string& layer, const std::string& part) {
    const std::string message = ParseError(WithLayer(layer));
    EXPECT_NE(message.find(part), std::string::npos) << layer << " -> " << message;
  };
  expect("  {\"kind\": \"relu\", \"maxvalue\": 6}", "field 'layers[2].maxvalue': unknown key");
  expect("  {\"kind\": \"conv2d\", \"kernel\": 3}", "field 'layers[2].filters': missing");
  expect("  {\"kind\": \"conv2d\", \"filters\": 4}", "field 'layers[2].kernel': missing");
  expect("  {\"kind\": \"conv2d\", \"filters\": -4, \"kernel\": 1}",
         "-4 is out of range [1, 1099511627776]");
  expect("  {\"kind\": \"conv2d\", \"filters\": 2.5, \"kernel\": 1}", "expected an integer");
  expect("  {\"kind\": \"conv2d\", \"filters\": 4, \"kernel\": [1, 2, 3]}", "a list of 2 integers");
  expect("  {\"kind\": \"conv2d\", \"filters\": 4, \"kernel\": 1, \"padding\": \"full\"}",
         "expected \"same\", \"valid\" or pixels");
  expect("  {\"kind\": \"batch_norm\", \"scale\": 1}", "expected true or false");
  expect("  {\"kind\": \"relu\", \"input\": \"c\", \"inputs\": [\"c\"]}", "either input or inputs");
  expect("  {\"kind\": \"input\"}", "unknown kind \"input\"");
  expect("  7", "field 'layers[2]': expected an object");
}

TEST(NetworkJsonErrors, DocumentLevelProblems) {
  EXPECT_NE(ParseError("{\"input\": [3, 8, 8],\n \"layers\": [\n}")
                .find("net.json:3: not valid "
                      "JSON"),
            std::string::npos);
  EXPECT_NE(ParseError("[1, 2]").find("expected a JSON object"), std::string::npos);
  // A number beyond double's range is a JSON error too (nlohmann's out_of_range).
  EXPECT_NE(ParseError("{\"input\": [3], \"layers\": 1e999}").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(ParseError("{\"layers\": []}").find("field 'input': missing"), std::string::npos);
  EXPECT_NE(ParseError("{\"input\": [0], \"layers\": []}").find("out of range"), std::string::npos);
  EXPECT_NE(ParseError("{\"input\": [4], \"layers\": []}").find("expected a list of layers"),
            std::string::npos);
  EXPECT_NE(ParseError("{\"schema\": \"fitspeed.fit/1\", \"input\": [4], \"layers\": []}")
                .find("field 'schema'"),
            std::string::npos);
  EXPECT_NE(ParseError("{\"input\": [4], \"layers\": [{\"kind\": \"dense\", \"units\": 3}]}")
                .find("the last layer must be the loss"),
            std::string::npos);
  EXPECT_THROW(ReadNetworkJsonFile(kModels + "no-such-file.json"), InputError);
}

}  // namespace
}  // namespace fitspeed
