// SIGTERM followed by SIGKILL at random short delays on a training experiment (docs/reliability.md,
// "Fault storms"): the stop path saves a checkpoint, and a SIGKILL may land in that save. However the
// signals fall, every try ends with exit 0 (nothing left), 130 (stopped) or SIGKILL, and a final
// uninterrupted resume ends with the ledger of an uninterrupted run apart from t, seq, timing, worker,
// with no failure record. CI runs 20 tries in one run dir; scripts/fault-storm.sh runs more
// (K3LAB_FAULT_STORM_TRIES per round, K3LAB_FAULT_STORM_ROUNDS rounds of one run dir each, seed
// K3LAB_FAULT_STORM_SEED).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "fault_support.hpp"

namespace k3lab::testing {
namespace {

int storm_setting(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  const int parsed = std::atoi(value);
  if (parsed <= 0) throw std::invalid_argument(std::string(name) + " must be a positive integer, got '" + value + "'");
  return parsed;
}

struct StopDelays {
  double term_after_s = 0;  // from the moment k3lab catches SIGTERM to SIGTERM
  double kill_after_s = 0;  // from SIGTERM to SIGKILL
};

// The delays of `tries` tries, from `seed` alone (mt19937's sequence is fixed by the standard; the
// conversion to seconds is done here, not by a library distribution). Up to 0.15 s before SIGTERM
// (choosing the run dir, then about one unit of the tiny training experiment), so that 20 tries do not
// finish the run and every try lands in it, and up to 0.3 s for the stop path (a checkpoint save) before
// SIGKILL.
std::vector<StopDelays> stop_delays(std::uint32_t seed, int tries) {
  std::mt19937 generator(seed);
  const auto fraction = [&generator] { return static_cast<double>(generator()) / 4294967296.0; };
  std::vector<StopDelays> delays(static_cast<std::size_t>(tries));
  for (auto& delay : delays) {
    delay.term_after_s = 0.15 * fraction();
    delay.kill_after_s = 0.3 * fraction();
  }
  return delays;
}

TEST(SignalStorm, TermThenKillAtRandomDelaysThenResumeEqualsAnUninterruptedRun) {
  const int tries = storm_setting("K3LAB_FAULT_STORM_TRIES", 20);
  const int rounds = storm_setting("K3LAB_FAULT_STORM_ROUNDS", 1);
  const int seed = storm_setting("K3LAB_FAULT_STORM_SEED", 1202);
  TempDir dir("k3lab-faults-storm");
  const auto options = fault_environment(dir.path());
  const auto& experiment = training_experiment();
  const auto straight = run_k3lab(experiment.run_arguments(dir.path() / "reference"), options);
  ASSERT_EQ(straight.exit_code, 0) << straight.output();
  const auto reference = comparable_terminal_records(only_run_dir(dir.path() / "reference", experiment.id));

  std::map<int, int> exit_codes;  // 128 + n: signal n
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round) + ", seed " + std::to_string(seed + round));
    const auto runs = dir.path() / ("storm-" + std::to_string(round));
    int try_number = 0;
    for (const auto& delay : stop_delays(static_cast<std::uint32_t>(seed + round), tries)) {
      const auto stopped =
          run_k3lab_stopped(experiment.run_arguments(runs), delay.term_after_s, delay.kill_after_s, options);
      ++exit_codes[stopped.exit_code];
      EXPECT_TRUE(stopped.exit_code == 0 || stopped.exit_code == 130 || stopped.exit_code == 128 + 9)
          << "try " << try_number << ": SIGTERM after " << delay.term_after_s << " s, SIGKILL " << delay.kill_after_s
          << " s later: exit " << stopped.exit_code << "\n"
          << stopped.output();
      ++try_number;
    }
    ASSERT_EQ(run_dirs(runs, experiment.id).size(), 1u);
    const auto resumed = run_k3lab(experiment.run_arguments(runs), options);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.output();
    EXPECT_EQ(resumed_run_difference(only_run_dir(runs, experiment.id), reference), "");
  }
  std::string tally;
  for (const auto& [code, count] : exit_codes) tally += " exit " + std::to_string(code) + ": " + std::to_string(count);
  std::cout << "[ storm    ] " << tries * rounds << " tries;" << tally << "\n";
  // A storm that never stopped a running unit tested nothing.
  EXPECT_GT(exit_codes[130] + exit_codes[128 + 9], 0) << tally;
}

}  // namespace
}  // namespace k3lab::testing
