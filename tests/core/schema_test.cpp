#include <gtest/gtest.h>

#include "k3lab/core/schema.hpp"

using namespace k3lab::core;
using nlohmann::json;

namespace {
Schema make() {
  auto inner = std::make_shared<Schema>();
  inner->number("rate", "arrivals per second").above(0);
  Schema s;
  s.integer("traces", "traces per mix").at_least(1);
  s.string("policy", "policy").one_of({"fixed-split", "unified"});
  s.object("arrival", inner, "arrival process");
  s.array_of("lengths", FieldType::Integer, "lengths").non_empty();
  s.boolean("verbose", "noise").optional();
  return s;
}
bool mentions(const std::vector<SchemaIssue>& issues, const std::string& path, const std::string& text) {
  for (const auto& i : issues) {
    if (i.path == path && i.message.find(text) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

TEST(Schema, AcceptsValid) {
  EXPECT_TRUE(make().validate(json::parse(R"({"traces":2,"policy":"unified","arrival":{"rate":1.5},"lengths":[1,2]})")).empty());
}

TEST(Schema, UnknownKeySuggestsNearMiss) {
  auto issues = make().validate(json::parse(R"({"tracse":2,"policy":"unified","arrival":{"rate":1},"lengths":[1]})"));
  EXPECT_TRUE(mentions(issues, "tracse", "did you mean \"traces\""));
  EXPECT_TRUE(mentions(issues, "traces", "missing required field"));
}

TEST(Schema, WrongTypeBoundsChoicesAndNested) {
  auto issues = make().validate(json::parse(R"({"traces":0,"policy":"unifed","arrival":{"rate":-1},"lengths":["a"]})"));
  EXPECT_TRUE(mentions(issues, "traces", ">= 1"));
  EXPECT_TRUE(mentions(issues, "policy", "did you mean \"unified\""));
  EXPECT_TRUE(mentions(issues, "arrival.rate", "> 0"));
  EXPECT_TRUE(mentions(issues, "lengths[0]", "expected an integer"));
  issues = make().validate(json::parse(R"({"traces":1.5,"policy":"unified","arrival":{"rate":1},"lengths":[]})"));
  EXPECT_TRUE(mentions(issues, "traces", "expected an integer"));
  EXPECT_TRUE(mentions(issues, "lengths", "at least 1"));
}

TEST(Schema, DidYouMeanRejectsFarWords) {
  EXPECT_EQ(did_you_mean("zzzzzz", {"traces", "policy"}), std::nullopt);
  EXPECT_EQ(did_you_mean("polcy", {"traces", "policy"}), std::optional<std::string>("policy"));
}

TEST(Schema, IntegersMustBeIntegralAndWithinInt64) {
  Schema s;
  s.integer("n", "a count");
  s.array_of("sizes", FieldType::Integer, "sizes").optional();
  auto issues_for = [&](const std::string& value) { return s.validate(json::parse(R"({"n":)" + value + "}")); };
  // Accepted: the int64 extremes, and integral numbers written as floats (JSON does not distinguish).
  EXPECT_TRUE(issues_for("9223372036854775807").empty());
  EXPECT_TRUE(issues_for("-9223372036854775808").empty());
  EXPECT_TRUE(issues_for("2.0").empty());
  EXPECT_TRUE(issues_for("1e3").empty());
  // Refused: beyond int64 (as an unsigned, as a float), and non-integral.
  EXPECT_TRUE(mentions(issues_for("1e308"), "n", "expected an integer between -9223372036854775808 and "
                                                 "9223372036854775807, got 1e+308"));
  EXPECT_TRUE(mentions(issues_for("9223372036854775808"), "n", "expected an integer between"));
  EXPECT_TRUE(mentions(issues_for("-1e19"), "n", "expected an integer between"));
  EXPECT_TRUE(mentions(issues_for("9.3e18"), "n", "expected an integer between"));
  EXPECT_TRUE(mentions(issues_for("2.5"), "n", "expected an integer, got 2.5"));
  const auto in_array = s.validate(json::parse(R"({"n":1,"sizes":[1,1e308]})"));
  EXPECT_TRUE(mentions(in_array, "sizes[1]", "expected an integer between"));
}

TEST(Schema, IntegerBoundsStillApplyWithinInt64) {
  Schema s;
  s.integer("n", "a count").at_least(1).at_most(1000);
  EXPECT_TRUE(s.validate(json::parse(R"({"n":1000})")).empty());
  EXPECT_TRUE(mentions(s.validate(json::parse(R"({"n":1001})")), "n", "<= 1000"));
  EXPECT_TRUE(mentions(s.validate(json::parse(R"({"n":0})")), "n", ">= 1"));
}
