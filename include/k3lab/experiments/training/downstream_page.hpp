#pragma once
// The downstream section of a proxy experiment's page, read from each result's
// data.downstream_task_quality (downstream.hpp): the suite, its item count and chance, per-arm seed
// means of acc and acc_norm at the budget with Student-t intervals, the protocol's metric by training
// tokens, and each predeclared comparison as a paired (by seed) bootstrap interval of the difference
// in the protocol's metric, which the module's decision reads.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::training {

struct DownstreamComparison {
  std::string treatment;
  std::string control;
};

struct DownstreamResults {
  bool declared = false;  // the run's parameters declare a suite
  std::string metric;     // "acc" or "acc_norm"
  // Per comparison "<treatment> - <control>": the paired interval of the metric's difference (two or
  // more seed pairs).
  std::map<std::string, report::Interval> differences;

  std::optional<report::Interval> difference(const std::string& treatment, const std::string& control) const;
  // "yes" / "no" / why not, for a decision row asking whether treatment scores higher (lower with
  // `lower`) than control with the interval excluding zero.
  std::string answer(const std::string& treatment, const std::string& control, bool lower) const;
  // The effect cell of that row: "estimate [low, high]" or why there is none.
  std::string effect(const std::string& treatment, const std::string& control) const;
};

struct DownstreamSection {
  std::vector<std::string> arms;                    // table and chart order
  std::vector<DownstreamComparison> comparisons;    // predeclared, each paired by seed
  Bootstrap bootstrap;
  std::string bootstrap_block;                      // where the protocol sets it, e.g. "decision"
  std::string record_key = "downstream_task_quality";  // the protocol's metric name in a result's data
  std::function<bool(const nlohmann::json&)> counts = {};  // the records that belong (all when empty)
};

// Adds the section (or the line saying why there is none) to the page; `parameters` are the run's
// (the manifest's).
DownstreamResults add_downstream_results(const nlohmann::json& parameters, const std::vector<nlohmann::json>& terminal,
                                         const DownstreamSection& section, report::Page& page);

}  // namespace k3lab::experiments::training
