// The failure rule on the per-head-muon page (docs/verdicts.md), tried against the committed smoke run
// with one terminal record changed at a time: a failed per-head-muon run is no claim, a failed muon run
// counts against muon, an open run leaves no verdict and labels the tables partial, the same failure
// in every arm excludes the seed with its reason, and a smoke page gives no verdict and its own sizes.
#include <gtest/gtest.h>

#include "../training/failure_rule_cases.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

namespace cases = failure_rule_cases;

const cases::Case& rule_case() {
  static const auto experiment = make_experiment();
  static const cases::Case c{*experiment, "per-head-muon", "per-head-muon", "muon", {"adamw", "muon", "per-head-muon"}, 7201, "not supported"};
  return c;
}

TEST(PerHeadMuonFailureRule, TheUnchangedRunReadsItsDecision) { cases::unchanged_run_reads_its_decision(rule_case()); }

TEST(PerHeadMuonFailureRule, ANanSeedInTheTreatmentIsNoClaim) { cases::treatment_nan_is_no_claim(rule_case()); }

TEST(PerHeadMuonFailureRule, AControlFailureCountsAgainstTheControl) {
  cases::control_failure_counts_against_the_control(rule_case());
}

TEST(PerHeadMuonFailureRule, AnOpenRunLeavesNoVerdictAndLabelsEveryTablePartial) {
  cases::incomplete_set_has_no_verdict_and_partial_labels(rule_case());
}

TEST(PerHeadMuonFailureRule, TheSameFailureInEveryArmExcludesTheSeedWithItsReason) {
  cases::identical_failure_in_every_arm_is_excluded(rule_case());
}

TEST(PerHeadMuonFailureRule, ASmokePageHasNoVerdictAndStatesItsOwnSizes) {
  cases::smoke_page_states_its_real_sizes_without_a_verdict(rule_case());
}

}  // namespace
}  // namespace k3lab::experiments::per_head_muon
