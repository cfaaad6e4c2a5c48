#pragma once
// The failure rule (docs/verdicts.md), tried against each proxy experiment's own page: the committed
// smoke run (fixtures/reports/<id>/run) read back, one terminal record changed, and the page summarised
// again. Each case names what it tries to break and checks with gtest assertions; the module's test file
// runs every case. Compiled once (failure_rule_cases.cpp, library k3lab_failure_rule_cases) for the five
// modules' test binaries.
#include <cstdint>
#include <string>
#include <vector>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::failure_rule_cases {

struct Case {
  const Experiment& experiment;
  std::string id;
  std::string treatment;
  std::string control;        // the control whose failure is tried
  std::vector<std::string> arms;  // every arm of a seed
  std::uint64_t seed = 0;     // a paired seed of the decision
  std::string refused;        // the verdict's start when the treatment's claim is refused
};

// Baseline: the unchanged run reads its decision, with a verdict and no seed lost.
void unchanged_run_reads_its_decision(const Case& c);

// A NaN seed in the treatment arm must not yield a claim for the treatment.
void treatment_nan_is_no_claim(const Case& c);

// A control failure counts against the control: the treatment's verdict is not refused for it.
void control_failure_counts_against_the_control(const Case& c);

// An incomplete set: no decision, and every table and chart after the records table says "partial".
void incomplete_set_has_no_verdict_and_partial_labels(const Case& c);

// The same failure in every arm of a seed is shared infrastructure: excluded, with its reason.
void identical_failure_in_every_arm_is_excluded(const Case& c);

// A smoke page: no decision, no verdict wording, and a can-say line from the run's own sizes.
void smoke_page_states_its_real_sizes_without_a_verdict(const Case& c);

}  // namespace k3lab::experiments::failure_rule_cases
