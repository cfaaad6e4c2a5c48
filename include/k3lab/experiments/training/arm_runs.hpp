#pragma once
// A proxy experiment's terminal records grouped by arm: the metrics of each result (M, with .arm and
// .seed) in record order, failures per arm, and pairs of runs that share a seed.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::experiments::training {

// What every run's metrics (M) carry: the arm and the seed it trained with.
struct RunIdentity {
  std::string arm;
  std::uint64_t seed = 0;
};

// The data of a result record holding every key in `required`, with its arm and seed read into
// `identity`; nullptr for any other record.
const nlohmann::json* result_data(const nlohmann::json& record, std::initializer_list<const char*> required,
                                  RunIdentity& identity);

template <class M>
struct ArmRuns {
  std::map<std::string, std::vector<M>> by_arm;
  std::map<std::string, std::size_t> failures;  // failure records per arm
  std::size_t ended = 0;                        // terminal records read
  std::size_t results = 0;                      // of them, results with metrics

  bool has(const std::string& arm) const { return by_arm.count(arm) > 0; }
  bool has_all(const std::vector<std::string>& arms) const {
    for (const auto& arm : arms) {
      if (!has(arm)) return false;
    }
    return true;
  }
  std::size_t failures_of(const std::string& arm) const { return failures.count(arm) ? failures.at(arm) : 0; }
  // The runs of two arms that share a seed, in treatment order: (treatment, control); empty without both.
  std::pair<std::vector<M>, std::vector<M>> pairs(const std::string& treatment, const std::string& control) const;
};

// The arm a failure record counts against: its data's arm (the runner's own failures carry none).
inline std::string data_arm(const nlohmann::json& record) {
  return record.value("data", nlohmann::json::object()).value("arm", std::string("unknown arm"));
}

// Groups `terminal` records; `read` gives a result's metrics (nullopt: not a usable result), `counts`
// (optional) selects the records that belong to the table at all.
template <class M>
ArmRuns<M> group_by_arm(const std::vector<nlohmann::json>& terminal,
                        const std::function<std::optional<M>(const nlohmann::json&)>& read,
                        const std::function<bool(const nlohmann::json&)>& counts = {},
                        const std::function<std::string(const nlohmann::json&)>& failure_arm = data_arm) {
  ArmRuns<M> runs;
  for (const auto& record : terminal) {
    if (counts && !counts(record)) continue;
    ++runs.ended;
    if (auto m = read(record)) {
      runs.by_arm[m->arm].push_back(std::move(*m));
      ++runs.results;
    } else if (record.value("kind", "") == "failure") {
      ++runs.failures[failure_arm(record)];
    }
  }
  return runs;
}

// The runs of `treatment` and `control` that share a seed, in treatment order: (treatment, control).
template <class M>
std::pair<std::vector<M>, std::vector<M>> paired_by_seed(const std::vector<M>& treatment, const std::vector<M>& control) {
  std::pair<std::vector<M>, std::vector<M>> pairs;
  for (const auto& t : treatment) {
    for (const auto& c : control) {
      if (c.seed == t.seed) {
        pairs.first.push_back(t);
        pairs.second.push_back(c);
      }
    }
  }
  return pairs;
}

template <class M>
std::pair<std::vector<M>, std::vector<M>> ArmRuns<M>::pairs(const std::string& treatment, const std::string& control) const {
  if (!has(treatment) || !has(control)) return {};
  return paired_by_seed(by_arm.at(treatment), by_arm.at(control));
}

}  // namespace k3lab::experiments::training
