#pragma once
// The failure rule every proxy-training verdict follows (docs/verdicts.md), written once:
//  1. A terminal record is a result, a failure of its arm, or a shared-infrastructure failure. Arm
//     failures: every `failure` record (nan-loss, non-finite-gradient, oom, exception, ...) and every
//     `invalid` record (safety-timeout, i.e. incomplete at the timeout; parameter-count) that 3 does
//     not claim.
//  2. A decision is read only once every planned run has a terminal record.
//  3. The only exclusion is shared infrastructure: a record whose reason is predeclared as
//     infrastructure (kInfrastructureReasons) or that carries "infrastructure": true, or the same kind
//     and reason in every arm of a seed. The whole seed then leaves every comparison, listed with why.
//  4. Treatment against its controls, seed by seed: a result in every arm is a numeric pair; a failed
//     treatment is a seed lost by the treatment (whatever the controls did); a completed treatment
//     beside a failed control is a seed lost by the control.
//  5. The treatment's claim needs no seed lost by the treatment and the module's predeclared
//     conditions over at least two numeric pairs. A seed lost by a control never blocks the claim;
//     when control failures leave fewer than two pairs, the verdict is "not evaluable".
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::training {

// Reasons predeclared as shared infrastructure: the dataset could not be read, or a confirmatory unit
// found its pilot phase unfinished (runner order, not the arm).
const std::vector<std::string>& infrastructure_reasons();

enum class RunClass { Result, ArmFailure, Infrastructure };

struct ClassifiedRun {
  std::string unit, arm, kind, reason;
  std::uint64_t seed = 0;
  RunClass run_class = RunClass::Result;
};

struct SeedExclusion {
  std::uint64_t seed = 0;
  std::string reason;
};

// "partial: <ended> of <planned> runs"
std::string partial_label(std::size_t ended, std::size_t planned);

struct RunOutcomes {
  std::size_t planned = 0;             // from the frozen plan; 0 when unknown
  std::vector<ClassifiedRun> runs;     // every counted terminal record, in record order
  std::vector<SeedExclusion> exclusions;

  std::size_t ended() const { return runs.size(); }
  bool complete() const { return planned > 0 && runs.size() >= planned; }
  std::string partial() const { return partial_label(ended(), planned); }
  bool excluded(std::uint64_t seed) const;
  // Whether a terminal record's seed (its spec's, else its data's) is not excluded.
  bool counts(const nlohmann::json& record) const;
  // The arm's run on a seed, or nullptr while it is open.
  const ClassifiedRun* find(const std::string& arm, std::uint64_t seed) const;
  // The arm's failures on seeds that count (not excluded).
  std::vector<const ClassifiedRun*> failures_of(const std::string& arm) const;
};

// Classifies `terminal` (those `counts` selects; all by default) against `arms`, the arms a seed runs.
// A record's arm and seed come from its spec, else from its data.
RunOutcomes classify_runs(const std::vector<nlohmann::json>& terminal, std::size_t planned,
                          const std::vector<std::string>& arms,
                          const std::function<bool(const nlohmann::json&)>& counts = {});

// One treatment against its controls, seed by seed (excluded seeds left out, open seeds unlisted).
struct SeedTally {
  std::string treatment;
  std::vector<std::string> controls;
  std::vector<std::uint64_t> paired;             // a result in every arm
  std::vector<std::uint64_t> lost_by_treatment;  // the treatment failed
  std::vector<std::uint64_t> lost_by_control;    // the treatment completed, a control failed

  bool enough_pairs() const { return paired.size() >= 2; }
  // Whether the treatment's claim may stand: no seed lost by it, and two numeric pairs or more.
  bool claim_allowed() const { return lost_by_treatment.empty() && enough_pairs(); }
  bool is_paired(std::uint64_t seed) const;
};

SeedTally tally_seeds(const RunOutcomes& outcomes, const std::string& treatment, const std::vector<std::string>& controls);

// The verdict after failures count: `refused` with the treatment's failed seeds when it lost any;
// "not evaluable: ..." when fewer than two pairs remain; else `rule_verdict` (what the predeclared
// conditions say over the pairs), with the controls' failed seeds named after it.
std::string counted_verdict(const SeedTally& tally, const std::string& rule_verdict, const std::string& refused);

// Rows {question, seeds, count} of a decision table: seeds paired, lost by the treatment, lost by the
// controls.
std::vector<std::vector<std::string>> tally_rows(const SeedTally& tally);

// The rule, stated on the page, and the excluded seeds with their reasons (or that there are none).
void add_failure_rule(const RunOutcomes& outcomes, report::Page& page);

// The results of the tally's paired seeds, in pair order: (treatment, control).
template <class M>
std::pair<std::vector<M>, std::vector<M>> paired_runs(const ArmRuns<M>& runs, const SeedTally& tally,
                                                      const std::string& control) {
  std::pair<std::vector<M>, std::vector<M>> pairs;
  if (!runs.has(tally.treatment) || !runs.has(control)) return pairs;
  for (const auto& t : runs.by_arm.at(tally.treatment)) {
    if (!tally.is_paired(t.seed)) continue;
    for (const auto& c : runs.by_arm.at(control)) {
      if (c.seed != t.seed) continue;
      pairs.first.push_back(t);
      pairs.second.push_back(c);
    }
  }
  return pairs;
}

// Drops the results on excluded seeds (shared infrastructure) from every aggregate.
template <class M>
void drop_excluded(ArmRuns<M>& runs, const RunOutcomes& outcomes) {
  for (auto it = runs.by_arm.begin(); it != runs.by_arm.end();) {
    std::erase_if(it->second, [&outcomes](const M& m) { return outcomes.excluded(m.seed); });
    it = it->second.empty() ? runs.by_arm.erase(it) : std::next(it);
  }
}

}  // namespace k3lab::experiments::training
