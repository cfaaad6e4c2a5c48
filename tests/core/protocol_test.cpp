#include <gtest/gtest.h>

#include "k3lab/core/freeze.hpp"
#include "k3lab/core/protocol.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab::core;
using k3lab::testing::minimal_protocol;
using k3lab::testing::TempDir;

namespace {
Schema parameter_schema() {
  Schema s;
  s.integer("units", "units").at_least(1);
  s.integer("seed", "seed");
  s.integer("invalid_every", "mark every n-th unit invalid (0: never)").at_least(0);
  s.integer("fail_unit", "index of a unit that throws (-1: none)");
  return s;
}
}  // namespace

TEST(Protocol, LoadsMergesProfilesAndHashesCanonically) {
  TempDir dir;
  const auto path = dir.write("memory-pool.json", minimal_protocol().dump(2));
  const auto schema = parameter_schema();
  const auto p = load_protocol(path, &schema);
  EXPECT_EQ(p.id, "memory-pool");
  EXPECT_EQ(p.arms.size(), 2u);
  EXPECT_EQ(p.parameters_for("full")["units"], 6);
  EXPECT_EQ(p.parameters_for("smoke")["units"], 4);
  EXPECT_EQ(p.parameters_for("smoke")["seed"], 1);
  EXPECT_THROW(p.parameters_for("tiny"), std::invalid_argument);
  // Whitespace and key order do not change the hash; content does.
  const auto compact = dir.write("b/memory-pool.json", minimal_protocol().dump());
  EXPECT_EQ(load_protocol(compact, &schema).hash(), p.hash());
  auto changed = minimal_protocol();
  changed["parameters"]["units"] = 7;
  const auto edited = dir.write("c/memory-pool.json", changed.dump());
  EXPECT_NE(load_protocol(edited, &schema).hash(), p.hash());
}

TEST(Protocol, ErrorsNameFileFieldAndFix) {
  TempDir dir;
  const auto schema = parameter_schema();
  auto doc = minimal_protocol();
  doc["stoping_rule"] = "x";
  doc["profiles"]["smoke"]["units"] = 0;
  doc["arms"][0].erase("requested_by_seed");
  const auto path = dir.write("memory-pool.json", doc.dump());
  try {
    load_protocol(path, &schema);
    FAIL();
  } catch (const ProtocolError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find(path.string()), std::string::npos) << text;
    EXPECT_NE(text.find("did you mean \"stopping_rule\""), std::string::npos) << text;
    EXPECT_NE(text.find("arms[0].requested_by_seed"), std::string::npos) << text;
  }
  // The profile check only runs once the common fields are valid.
  doc = minimal_protocol();
  doc["profiles"]["smoke"]["units"] = 0;
  dir.write("memory-pool.json", doc.dump());
  try {
    load_protocol(path, &schema);
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("profiles.smoke -> parameters.units"), std::string::npos) << e.what();
  }
  dir.write("memory-pool.json", "{\"id\": ");
  EXPECT_THROW(load_protocol(path, &schema), ProtocolError);
  const auto misnamed = dir.write("other/router-balance.json", minimal_protocol().dump());
  EXPECT_THROW(load_protocol(misnamed, &schema), ProtocolError);
}

TEST(Freeze, DetectsEditsAfterFreezing) {
  TempDir dir;
  const auto schema = parameter_schema();
  const auto path = dir.write("memory-pool.json", minimal_protocol().dump(2));
  auto p = load_protocol(path, &schema);
  EXPECT_FALSE(check_freeze(p).frozen);
  EXPECT_FALSE(check_freeze(p).record.has_value());
  const auto record = freeze(p);
  EXPECT_EQ(record.protocol_sha256, p.hash());
  EXPECT_TRUE(check_freeze(p).frozen);
  auto doc = minimal_protocol();
  doc["hypothesis"] = "a different hypothesis";
  dir.write("memory-pool.json", doc.dump(2));
  p = load_protocol(path, &schema);
  const auto status = check_freeze(p);
  EXPECT_FALSE(status.frozen);
  EXPECT_TRUE(status.record.has_value());
  EXPECT_NE(status.explanation.find("edited after it was frozen"), std::string::npos);
}

// A protocol may state how its controlled variables are enforced, with a version; a wrong value is named.
TEST(Protocol, ControlsAndVersionAreOptionalAndChecked) {
  TempDir dir;
  auto doc = minimal_protocol();
  doc["version"] = 2;
  doc["controls"] = {{"mixed_hardware", "allowed"}};
  EXPECT_NO_THROW(load_protocol(dir.write("memory-pool.json", doc.dump(2)), nullptr));
  doc["controls"]["mixed_hardware"] = "sometimes";
  try {
    load_protocol(dir.write("memory-pool.json", doc.dump(2)), nullptr);
    FAIL() << "an unknown controls value was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("controls.mixed_hardware"), std::string::npos) << e.what();
  }
  doc["controls"] = {{"mixed_hardware", "allowed"}};
  doc["version"] = 0;
  EXPECT_THROW(load_protocol(dir.write("memory-pool.json", doc.dump(2)), nullptr), ProtocolError);
}
