#pragma once
// A minimal valid protocol document and a throwaway folder, shared by the core tests.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::testing {

inline nlohmann::json minimal_protocol(const std::string& id = "memory-pool") {
  return nlohmann::json::parse(R"({
    "id": ")" + id + R"(", "title": "t", "seed_section": "s", "evidence_class": "systems-simulation",
    "hypothesis": "h", "arms": [{"id": "a", "description": "d", "requested_by_seed": true},
                                {"id": "b", "description": "d", "requested_by_seed": true}],
    "controlled_variables": ["x"], "metrics": [{"name": "m", "description": "d"}],
    "evaluation_cadence": "e", "stopping_rule": "s", "invalid_run_rule": "i", "decision_rule": "d",
    "can_say": ["c"], "cannot_say": ["n"],
    "parameters": {"units": 6, "seed": 1, "invalid_every": 0, "fail_unit": -1},
    "profiles": {"full": {}, "smoke": {"units": 4}}})");
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("k3lab-test-" + std::to_string(std::random_device{}()) + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace k3lab::testing
