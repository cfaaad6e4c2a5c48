// The failure rule on the router-balance page (docs/verdicts.md), tried against the committed smoke run
// with one terminal record changed at a time: a failed quantile-balancing run is no claim, a failed fixed-step-bias run
// counts against fixed-step-bias, an open run leaves no verdict and labels the tables partial, the same failure
// in every arm excludes the seed with its reason, and a smoke page gives no verdict and its own sizes.
#include <gtest/gtest.h>

#include "../training/failure_rule_cases.hpp"
#include "router_balance/units.hpp"

namespace k3lab::experiments::router_balance {
namespace {

namespace cases = failure_rule_cases;

const cases::Case& rule_case() {
  static const auto experiment = make_experiment();
  static const cases::Case c{*experiment, "router-balance", "quantile-balancing", "fixed-step-bias", {"no-control", "aux-loss", "fixed-step-bias", "quantile-balancing"}, 5101, "not supported"};
  return c;
}

TEST(RouterBalanceFailureRule, TheUnchangedRunReadsItsDecision) { cases::unchanged_run_reads_its_decision(rule_case()); }

TEST(RouterBalanceFailureRule, ANanSeedInTheTreatmentIsNoClaim) { cases::treatment_nan_is_no_claim(rule_case()); }

TEST(RouterBalanceFailureRule, AControlFailureCountsAgainstTheControl) {
  cases::control_failure_counts_against_the_control(rule_case());
}

TEST(RouterBalanceFailureRule, AnOpenRunLeavesNoVerdictAndLabelsEveryTablePartial) {
  cases::incomplete_set_has_no_verdict_and_partial_labels(rule_case());
}

TEST(RouterBalanceFailureRule, TheSameFailureInEveryArmExcludesTheSeedWithItsReason) {
  cases::identical_failure_in_every_arm_is_excluded(rule_case());
}

TEST(RouterBalanceFailureRule, ASmokePageHasNoVerdictAndStatesItsOwnSizes) {
  cases::smoke_page_states_its_real_sizes_without_a_verdict(rule_case());
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
