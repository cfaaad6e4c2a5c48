#include "k3lab/experiments/training/failure_rule.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "k3lab/experiments/training/training_unit.hpp"

namespace k3lab::experiments::training {
namespace {

// The per-head-muon invalid reason for a confirmatory unit that found its pilots unfinished.
constexpr const char* kPilotsUnfinished = "pilots-unfinished";

nlohmann::json field(const nlohmann::json& record, const char* object, const char* key) {
  if (!record.contains(object) || !record.at(object).is_object() || !record.at(object).contains(key)) return nullptr;
  return record.at(object).at(key);
}

std::string record_arm(const nlohmann::json& record) {
  auto arm = field(record, "spec", "arm");
  if (arm.is_null()) arm = field(record, "data", "arm");
  return arm.is_string() ? arm.get<std::string>() : std::string("unknown arm");
}

std::uint64_t seed_of(const nlohmann::json& record) {
  auto seed = field(record, "spec", "seed");
  if (seed.is_null()) seed = field(record, "data", "seed");
  return seed.is_number_unsigned() || seed.is_number_integer() ? seed.get<std::uint64_t>() : 0;
}

bool tagged_infrastructure(const nlohmann::json& record) {
  const auto& reasons = infrastructure_reasons();
  const auto reason = record.value("reason", std::string());
  return record.value("infrastructure", false) || field(record, "data", "infrastructure") == true ||
         std::find(reasons.begin(), reasons.end(), reason) != reasons.end();
}

std::string seed_list(const std::vector<std::uint64_t>& seeds) {
  std::string text;
  for (auto seed : seeds) text += (text.empty() ? "" : ", ") + std::to_string(seed);
  return (seeds.size() == 1 ? "seed " : "seeds ") + text;
}

std::string names_joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// The seeds where every arm ended with the same kind and reason, none of them a result.
void exclude_identical_failures(RunOutcomes& outcomes, const std::vector<std::string>& arms) {
  std::map<std::uint64_t, std::vector<ClassifiedRun*>> by_seed;
  for (auto& run : outcomes.runs) by_seed[run.seed].push_back(&run);
  for (auto& [seed, runs] : by_seed) {
    if (outcomes.excluded(seed) || arms.empty()) continue;
    std::set<std::string> arms_seen;
    std::set<std::pair<std::string, std::string>> failures;
    for (const auto* run : runs) {
      arms_seen.insert(run->arm);
      failures.insert({run->kind, run->reason});
    }
    const bool every_arm = std::all_of(arms.begin(), arms.end(), [&](const auto& arm) { return arms_seen.count(arm); });
    if (!every_arm || failures.size() != 1 || failures.begin()->first == "result") continue;
    for (auto* run : runs) run->run_class = RunClass::Infrastructure;
    outcomes.exclusions.push_back({seed, "the same " + failures.begin()->first + " (" + failures.begin()->second +
                                             ") in every arm of the seed: shared infrastructure"});
  }
}

}  // namespace

const std::vector<std::string>& infrastructure_reasons() {
  static const std::vector<std::string> reasons = {kDataUnavailable, kPilotsUnfinished};
  return reasons;
}

std::string partial_label(std::size_t ended, std::size_t planned) {
  return "partial: " + std::to_string(ended) + " of " + std::to_string(planned) + " runs";
}

bool RunOutcomes::excluded(std::uint64_t seed) const {
  return std::any_of(exclusions.begin(), exclusions.end(), [seed](const auto& e) { return e.seed == seed; });
}

bool RunOutcomes::counts(const nlohmann::json& record) const { return !excluded(seed_of(record)); }

const ClassifiedRun* RunOutcomes::find(const std::string& arm, std::uint64_t seed) const {
  for (const auto& run : runs) {
    if (run.arm == arm && run.seed == seed) return &run;
  }
  return nullptr;
}

std::vector<const ClassifiedRun*> RunOutcomes::failures_of(const std::string& arm) const {
  std::vector<const ClassifiedRun*> failures;
  for (const auto& run : runs) {
    if (run.arm == arm && run.run_class == RunClass::ArmFailure && !excluded(run.seed)) failures.push_back(&run);
  }
  return failures;
}

RunOutcomes classify_runs(const std::vector<nlohmann::json>& terminal, std::size_t planned,
                          const std::vector<std::string>& arms, const std::function<bool(const nlohmann::json&)>& counts) {
  RunOutcomes outcomes;
  outcomes.planned = planned;
  for (const auto& record : terminal) {
    if (counts && !counts(record)) continue;
    ClassifiedRun run{record.value("unit", std::string()), record_arm(record), record.value("kind", std::string()),
                      record.value("reason", std::string()), seed_of(record), RunClass::Result};
    if (run.kind != "result") {
      run.run_class = tagged_infrastructure(record) ? RunClass::Infrastructure : RunClass::ArmFailure;
      if (run.run_class == RunClass::Infrastructure && !outcomes.excluded(run.seed)) {
        outcomes.exclusions.push_back({run.seed, run.unit + ": " + run.kind + " (" + run.reason + ", " +
                                                     record.value("detail", std::string()) +
                                                     ") is predeclared shared infrastructure"});
      }
    }
    outcomes.runs.push_back(std::move(run));
  }
  exclude_identical_failures(outcomes, arms);
  return outcomes;
}

bool SeedTally::is_paired(std::uint64_t seed) const { return std::find(paired.begin(), paired.end(), seed) != paired.end(); }

SeedTally tally_seeds(const RunOutcomes& outcomes, const std::string& treatment, const std::vector<std::string>& controls) {
  SeedTally tally{treatment, controls, {}, {}, {}};
  std::vector<std::uint64_t> seeds;
  for (const auto& run : outcomes.runs) {
    if (!outcomes.excluded(run.seed) && std::find(seeds.begin(), seeds.end(), run.seed) == seeds.end()) {
      seeds.push_back(run.seed);
    }
  }
  for (auto seed : seeds) {
    const auto* t = outcomes.find(treatment, seed);
    if (!t) continue;
    if (t->run_class == RunClass::ArmFailure) {
      tally.lost_by_treatment.push_back(seed);
      continue;
    }
    bool all_results = true, control_failed = false;
    for (const auto& control : controls) {
      const auto* c = outcomes.find(control, seed);
      all_results = all_results && c && c->run_class == RunClass::Result;
      control_failed = control_failed || (c && c->run_class == RunClass::ArmFailure);
    }
    if (control_failed) {
      tally.lost_by_control.push_back(seed);
    } else if (all_results) {
      tally.paired.push_back(seed);
    }
  }
  return tally;
}

std::string counted_verdict(const SeedTally& tally, const std::string& rule_verdict, const std::string& refused) {
  const std::string controls =
      tally.controls.size() == 1 ? tally.controls.front() : "a control (" + names_joined(tally.controls) + ")";
  const std::string control_losses =
      tally.lost_by_control.empty() ? "" : controls + " failed on " + seed_list(tally.lost_by_control) + " (lost by the control)";
  if (!tally.lost_by_treatment.empty()) {
    return refused + ": " + tally.treatment + " failed on " + seed_list(tally.lost_by_treatment) + " (lost by " +
           tally.treatment + "; a failure counts against its arm)";
  }
  if (!tally.enough_pairs()) {
    return "not evaluable: " + std::to_string(tally.paired.size()) + " seed(s) with a result in every arm, two needed" +
           (control_losses.empty() ? std::string() : "; " + control_losses);
  }
  return rule_verdict + (control_losses.empty() ? std::string() : "; " + control_losses);
}

std::vector<std::vector<std::string>> tally_rows(const SeedTally& tally) {
  auto seeds = [](const std::vector<std::uint64_t>& s) { return s.empty() ? std::string("none") : seed_list(s); };
  return {{"seeds with a result in " + tally.treatment + " and " + names_joined(tally.controls) + " (the pairs)",
           seeds(tally.paired), std::to_string(tally.paired.size())},
          {"seeds lost by " + tally.treatment + " (its run failed: counts against it, blocks its claim)",
           seeds(tally.lost_by_treatment), std::to_string(tally.lost_by_treatment.size())},
          {"seeds lost by " + names_joined(tally.controls) + " (a control failed, " + tally.treatment +
               " completed: counts against the control)",
           seeds(tally.lost_by_control), std::to_string(tally.lost_by_control.size())}};
}

void add_failure_rule(const RunOutcomes& outcomes, report::Page& page) {
  page.add_text(
      "**Failure rule** (docs/verdicts.md): a failed run (NaN, divergence, OOM, incomplete at the safety timeout) is "
      "an outcome of its arm. The decision is read only when every planned run has ended. A seed where the treatment "
      "failed is lost by the treatment and blocks its claim; a seed where only a control failed is lost by that "
      "control. The only exclusion is shared infrastructure (the same failure in every arm of a seed, or a reason "
      "predeclared as infrastructure), listed below with its reason. Tables and charts drawn before every run ended "
      "are labelled partial, and no decision is read from them.");
  if (outcomes.exclusions.empty()) {
    page.add_text("Excluded seeds (shared infrastructure): none.");
    return;
  }
  auto table = report::make_table("excluded-seeds", "Excluded seeds (shared infrastructure)", {"seed", "reason"});
  for (const auto& e : outcomes.exclusions) table.rows.push_back({std::to_string(e.seed), e.reason});
  table.caption = "Every arm's run of an excluded seed leaves every table, chart and comparison on this page.";
  page.add_table(std::move(table));
}

}  // namespace k3lab::experiments::training
