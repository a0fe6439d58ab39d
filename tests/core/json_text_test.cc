// Positions in JSON text (src/core/json_text.h): the lines error messages name.
#include "core/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace fitspeed {
namespace {

// Line 1 "{", 2 "a", 3 "b" (with a nested "a" that is not the object's own),
// 4 "list", 5 its second element, 6 the closing brace.
const std::string kText =
    "{\n"
    "  \"a\": 1,\n"
    "  \"b\": {\"a\": \"x:\\\"y\"},\n"
    "  \"list\": [10,\n"
    "    {\"c\": 2}],\n"
    "}";

TEST(JsonText, FindsTheObjectsOwnKeyNotANestedOne) {
  const size_t b = FindJsonKey(kText, 0, "b");
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(LineAt(kText, b), 3);
  EXPECT_EQ(kText[JsonValueOfKey(kText, b)], '{');
  EXPECT_EQ(LineAt(kText, FindJsonKey(kText, 0, "a")), 2);
  EXPECT_EQ(FindJsonKey(kText, 0, "c"), std::string::npos);  // only in a nested object
  // The nested "a" is found from its own object's brace.
  const size_t nested = JsonValueOfKey(kText, b);
  EXPECT_EQ(kText.substr(JsonValueOfKey(kText, FindJsonKey(kText, nested, "a")), 3), "\"x:");
}

TEST(JsonText, FindsArrayElementsAcrossLines) {
  const size_t list = JsonValueOfKey(kText, FindJsonKey(kText, 0, "list"));
  EXPECT_EQ(LineAt(kText, FindJsonElement(kText, list, 0)), 4);
  EXPECT_EQ(LineAt(kText, FindJsonElement(kText, list, 1)), 5);
  EXPECT_EQ(FindJsonElement(kText, list, 2), std::string::npos);
  EXPECT_EQ(LineAt(kText, kText.size() + 10), 6);
}

TEST(JsonText, FindsAKeyGivenTwiceInOneObjectOnly) {
  EXPECT_FALSE(FindDuplicateJsonKey(kText));  // "a" twice, but in two objects
  const std::string twice = "{\"x\": 1,\n \"y\": {\"x\": 2},\n \"x\": 3}";
  const auto duplicate = FindDuplicateJsonKey(twice);
  ASSERT_TRUE(duplicate);
  EXPECT_EQ(duplicate->first, "x");
  EXPECT_EQ(LineAt(twice, duplicate->second), 3);
}

}  // namespace
}  // namespace fitspeed
