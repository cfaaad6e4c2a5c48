#pragma once
// Shared helpers of the context-probe tests: the protocol's own parameters, a scratch folder, and
// scoped environment variables (the endpoint choice reads the environment).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"
#include "context_probe/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::context_probe_test {

std::filesystem::path protocol_file();
// parameters_for(profile) of experiments/context-probe.json.
nlohmann::json protocol_parameters(const std::string& profile);
experiments::context_probe::Parameters smoke_parameters();
// The unit with this id from the smoke enumeration (throws when absent).
experiments::Unit smoke_unit(const std::string& id);
std::vector<experiments::Unit> smoke_units();

using ScratchDir = k3lab::testing::TempDir;

// Sets (or, with nullopt, unsets) a variable for the scope; restores the old value after.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Every regular file under `root` whose bytes contain `needle`.
std::vector<std::filesystem::path> files_containing(const std::filesystem::path& root, const std::string& needle);

}  // namespace k3lab::context_probe_test
