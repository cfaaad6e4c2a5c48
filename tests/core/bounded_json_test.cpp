#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/set_value.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab::core;
using k3lab::testing::minimal_protocol;
using k3lab::testing::TempDir;
using nlohmann::json;

namespace {

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

JsonInputError::Kind failure_kind(const std::string& text, const JsonLimits& limits = {}) {
  try {
    (void)parse_json_bounded(text, "input", limits);
  } catch (const JsonInputError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected a JsonInputError for " << text.substr(0, 60);
  return JsonInputError::Kind::Syntax;
}

}  // namespace

TEST(BoundedJson, ParsesWhatThePlainParserParses) {
  const std::string text = R"({"a": [1, 2.5, "x", null, true, {"b": {"c": []}}], "d": -9223372036854775808})";
  EXPECT_EQ(parse_json_bounded(text, "input"), json::parse(text));
}

TEST(BoundedJson, DepthLimitCountsNestedContainers) {
  const JsonLimits three{3, 1u << 20};
  // Depths by hand: a scalar 0, [] 1, [[]] 2, {"a":[{}]} 3.
  EXPECT_EQ(parse_json_bounded("7", "input", JsonLimits{0, 64}), json(7));
  EXPECT_NO_THROW((void)parse_json_bounded(R"({"a":[{}]})", "input", three));
  EXPECT_EQ(failure_kind(R"({"a":[{"b":[]}]})", three), JsonInputError::Kind::TooDeep);
  EXPECT_NO_THROW((void)parse_json_bounded(nested_arrays(3), "input", three));
  EXPECT_EQ(failure_kind(nested_arrays(4), three), JsonInputError::Kind::TooDeep);
}

TEST(BoundedJson, HundredThousandLevelsIsAnErrorNotACrash) {
  const std::string deep = nested_arrays(100000);
  try {
    (void)parse_json_bounded(deep, "deep.json");
    FAIL() << "expected an error";
  } catch (const JsonInputError& e) {
    EXPECT_EQ(e.kind(), JsonInputError::Kind::TooDeep);
    EXPECT_NE(std::string(e.what()).find("deep.json nests arrays and objects deeper than 100 levels"),
              std::string::npos)
        << e.what();
  }
  // Unclosed brackets are refused by depth before the parser reaches the missing end.
  EXPECT_EQ(failure_kind(std::string(100000, '{')), JsonInputError::Kind::Syntax);
  EXPECT_EQ(failure_kind(std::string(100000, '[')), JsonInputError::Kind::TooDeep);
}

TEST(BoundedJson, SizeOverflowAndSyntaxAreTold) {
  EXPECT_EQ(failure_kind(std::string(65, ' ') + "1", JsonLimits{10, 64}), JsonInputError::Kind::TooLarge);
  EXPECT_EQ(failure_kind("[1e400]"), JsonInputError::Kind::NumberOverflow);
  EXPECT_EQ(failure_kind("-1e400"), JsonInputError::Kind::NumberOverflow);
  EXPECT_EQ(failure_kind("{\"a\": }"), JsonInputError::Kind::Syntax);
  EXPECT_EQ(failure_kind(""), JsonInputError::Kind::Syntax);
  try {
    (void)parse_json_bounded("{\"a\": }", "manifest.json");
    FAIL();
  } catch (const JsonInputError& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("manifest.json is not valid JSON: ", 0), 0u) << text;
    EXPECT_EQ(text.find("[json.exception"), std::string::npos) << text;
  }
}

TEST(BoundedJson, ReadBoundedTextRefusesALargeFileBeforeReadingIt) {
  TempDir dir;
  const auto file = dir.write("big.json", std::string(2048, ' ') + "1");
  EXPECT_EQ(read_bounded_text(file, "input", JsonLimits{10, 4096}), std::string(2048, ' ') + "1");
  try {
    (void)read_bounded_text(file, "input", JsonLimits{10, 1024});
    FAIL();
  } catch (const JsonInputError& e) {
    EXPECT_EQ(e.kind(), JsonInputError::Kind::TooLarge);
    EXPECT_NE(std::string(e.what()).find("2049 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)read_bounded_text(dir / "missing.json", "input", {}), std::runtime_error);
}

TEST(BoundedJson, ProtocolNestedHundredThousandLevelsIsAProtocolError) {
  TempDir dir;
  auto doc = minimal_protocol();
  doc["parameters"]["units"] = "PLACEHOLDER";
  std::string text = doc.dump();
  text.replace(text.find("\"PLACEHOLDER\""), 13, nested_arrays(100000));
  const auto path = dir.write("memory-pool.json", text);
  try {
    (void)load_protocol(path, nullptr);
    FAIL() << "expected a ProtocolError";
  } catch (const ProtocolError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message.substr(0, 300);
    EXPECT_NE(message.find("deeper than 100 levels"), std::string::npos) << message.substr(0, 300);
  }
}

TEST(SetValue, JsonWhenItParsesTextOtherwise) {
  EXPECT_EQ(parse_set_value("5"), json(5));
  EXPECT_EQ(parse_set_value("2.5"), json(2.5));
  EXPECT_EQ(parse_set_value("true"), json(true));
  EXPECT_EQ(parse_set_value("[1,2]"), json::array({1, 2}));
  EXPECT_EQ(parse_set_value("\"quoted\""), json("quoted"));
  EXPECT_EQ(parse_set_value("unified"), json("unified"));
  EXPECT_EQ(parse_set_value(""), json(""));
}

TEST(SetValue, UnrepresentableValuesAreUsageErrors) {
  for (const std::string& text : std::vector<std::string>{"1e400", "-1e400", nested_arrays(1000)}) {
    try {
      (void)parse_set_value(text);
      FAIL() << "expected std::invalid_argument for " << text.substr(0, 40);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--set value"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos) << e.what();
    }
  }
}
