// The failure rule on the hybrid-attention page (docs/verdicts.md), tried against the committed smoke run
// with one terminal record changed at a time: a failed hybrid-3kda-1mla run is no claim, a failed all-kda run
// counts against all-kda, an open run leaves no verdict and labels the tables partial, the same failure
// in every arm excludes the seed with its reason, and a smoke page gives no verdict and its own sizes.
#include <gtest/gtest.h>

#include "../training/failure_rule_cases.hpp"
#include "hybrid_attention/units.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

namespace cases = failure_rule_cases;

const cases::Case& rule_case() {
  static const auto experiment = make_experiment();
  static const cases::Case c{*experiment, "hybrid-attention", "hybrid-3kda-1mla", "all-kda", {"full-attention", "all-kda", "hybrid-3kda-1mla"}, 3101, "not supported"};
  return c;
}

TEST(HybridAttentionFailureRule, TheUnchangedRunReadsItsDecision) { cases::unchanged_run_reads_its_decision(rule_case()); }

TEST(HybridAttentionFailureRule, ANanSeedInTheTreatmentIsNoClaim) { cases::treatment_nan_is_no_claim(rule_case()); }

TEST(HybridAttentionFailureRule, AControlFailureCountsAgainstTheControl) {
  cases::control_failure_counts_against_the_control(rule_case());
}

TEST(HybridAttentionFailureRule, AnOpenRunLeavesNoVerdictAndLabelsEveryTablePartial) {
  cases::incomplete_set_has_no_verdict_and_partial_labels(rule_case());
}

TEST(HybridAttentionFailureRule, TheSameFailureInEveryArmExcludesTheSeedWithItsReason) {
  cases::identical_failure_in_every_arm_is_excluded(rule_case());
}

TEST(HybridAttentionFailureRule, ASmokePageHasNoVerdictAndStatesItsOwnSizes) {
  cases::smoke_page_states_its_real_sizes_without_a_verdict(rule_case());
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
