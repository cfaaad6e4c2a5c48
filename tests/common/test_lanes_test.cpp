// The ctest schedule of this build (cmake/TestLanes.cmake, LANE in tests/CMakeLists.txt), read back
// from `ctest --show-only=json-v1`: every test in a lane holds its lane's lock and waits for every test
// outside the lanes, and no test runs alone (RUN_SERIAL would stop the lanes running side by side). A
// test registered some other way than k3lab_add_gtest or add_test would be missing from the lanes'
// DEPENDS and is named here.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/k3lab_process.hpp"

namespace k3lab::testing {
namespace {

struct ScheduledTest {
  std::set<std::string> depends;
  std::set<std::string> locks;
  bool serial = false;
};

std::set<std::string> strings_of(const nlohmann::json& value) {
  std::set<std::string> out;
  if (value.is_string()) out.insert(value.get<std::string>());
  if (value.is_array()) {
    for (const auto& item : value) out.insert(item.get<std::string>());
  }
  return out;
}

std::map<std::string, ScheduledTest> scheduled_tests() {
  const auto listed = run_program(K3LAB_CTEST_COMMAND, {"--test-dir", K3LAB_BUILD_DIR, "--show-only=json-v1"});
  if (listed.exit_code != 0) throw std::runtime_error("ctest --show-only failed:\n" + listed.output());
  const auto listing = nlohmann::json::parse(listed.out);
  std::map<std::string, ScheduledTest> tests;
  for (const auto& test : listing.at("tests")) {
    ScheduledTest& scheduled = tests[test.at("name").get<std::string>()];
    for (const auto& property : test.value("properties", nlohmann::json::array())) {
      const auto name = property.at("name").get<std::string>();
      if (name == "DEPENDS") scheduled.depends = strings_of(property.at("value"));
      if (name == "RESOURCE_LOCK") scheduled.locks = strings_of(property.at("value"));
      if (name == "RUN_SERIAL") scheduled.serial = property.at("value").get<bool>();
    }
  }
  return tests;
}

TEST(TestLanes, EveryLaneTestHoldsALockAndWaitsForEveryTestOutsideTheLanes) {
  const auto tests = scheduled_tests();
  std::set<std::string> lanes;
  std::set<std::string> others;
  for (const auto& [name, test] : tests) {
    EXPECT_FALSE(test.serial) << name << " is RUN_SERIAL: give it a LANE (tests/CMakeLists.txt)";
    (test.depends.empty() ? others : lanes).insert(name);
  }
  ASSERT_FALSE(lanes.empty()) << "no test is in a lane: the signal, data-parallel and Slurm cluster tests are";
  ASSERT_TRUE(others.count("k3lab_test_common_tests")) << "this binary is not outside the lanes";
  for (const auto& name : lanes) {
    const auto& test = tests.at(name);
    EXPECT_FALSE(test.locks.empty()) << name << " is in a lane without its lane's lock";
    for (const auto& other : others) {
      EXPECT_TRUE(test.depends.count(other))
          << name << " does not wait for " << other << ": was it registered without k3lab_add_gtest?";
    }
    for (const auto& dependency : test.depends) {
      EXPECT_TRUE(tests.count(dependency)) << name << " waits for " << dependency << ", which is no test";
    }
  }
}

}  // namespace
}  // namespace k3lab::testing
