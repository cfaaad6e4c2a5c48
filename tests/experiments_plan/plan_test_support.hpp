#pragma once
// Shared helpers of the experiment-plan tests: the seven planning modules with the facts the seed
// fixes for each (full-profile unit count, arms) and the parameters a profile must not change.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::plan_test {

struct Case {
  std::string id;
  std::unique_ptr<Experiment> (*make)();
  std::size_t full_units;             // from the seed's stopping rule
  std::vector<std::string> arms;      // the seed's arms, in the protocol's ids
  std::vector<std::string> logic;     // JSON pointers into parameters that no profile may change
  std::string count_field;            // a top-level integer count, for the broken-copy tests
};

const std::vector<Case>& cases();
const Case& case_for(const std::string& id);

std::filesystem::path protocol_file(const std::string& id);
core::Protocol load(const Case& c);
nlohmann::json read_json(const std::filesystem::path& file);

// Loads a broken copy and returns the problems reported; fails the test if it loads.
std::vector<core::SchemaIssue> load_issues(const Case& c, const nlohmann::json& document);

// The arm of every unit, in order (spec.arm).
std::vector<std::string> unit_arms(const std::vector<Unit>& units);

// A terminal ledger record of `kind` (result, invalid, failure) for `u`, as the window rules read it.
nlohmann::json terminal(const Unit& u, const std::string& kind);

}  // namespace k3lab::experiments::plan_test
