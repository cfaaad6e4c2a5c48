#pragma once
// What the fault-injection tests share (docs/reliability.md, "Fault storms"): the experiments they run
// small, the k3lab binary started under a file size limit or stopped by SIGTERM then SIGKILL, and the
// comparison of a faulted-then-resumed ledger with an uninterrupted one. Processes, temp dirs and
// ledgers come from tests/common, the hermetic environment from tests/smoke.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/k3lab_process.hpp"

namespace k3lab::testing {

// One experiment as the fault tests run it: smoke profile, CPU, one thread, plus `extra` arguments.
struct FaultExperiment {
  std::string id;
  std::vector<std::string> extra;  // e.g. --unfrozen --set ... to keep a training experiment tiny
  std::vector<std::string> run_arguments(const std::filesystem::path& runs_root) const;
};

// context-probe (API, embedded mock), memory-pool (simulator), per-head-muon (training, shrunk with --set).
const FaultExperiment& api_experiment();
const FaultExperiment& simulator_experiment();
const FaultExperiment& training_experiment();
void PrintTo(const FaultExperiment& experiment, std::ostream* out);

// The environment of tests/smoke (protocols of this checkout, no endpoint or launcher variables), in `cwd`.
ProcessOptions fault_environment(const std::filesystem::path& cwd);

// Runs `k3lab args...` with RLIMIT_FSIZE set to `limit_bytes` (rounded down to KiB) and SIGXFSZ ignored,
// both set in the child before exec, so a write past the limit fails with EFBIG. Like run_k3lab, with
// with_passive_openmp(options).
ProcessResult run_k3lab_with_file_size_limit(const std::vector<std::string>& args, std::uintmax_t limit_bytes,
                                             const ProcessOptions& options);

// Where the delay before SIGTERM counts from: k3lab's stop handler installed (a running command), or the
// exec of the binary (start-up: LibTorch loading, main, the OpenMP restart).
enum class StopClock { kFromHandler, kFromExec };

// Runs `k3lab args...` and, once `clock` starts, waits `term_after_s`, sends SIGTERM, waits `kill_after_s`
// more and sends SIGKILL (with_passive_openmp(options), like run_k3lab). Returns the exit code as a shell
// reports it: 0 or k3lab's own code, 128 + n for signal n.
ProcessResult run_k3lab_stopped(const std::vector<std::string>& args, StopClock clock, double term_after_s,
                                double kill_after_s, const ProcessOptions& options);

// Sizes of the files of a finished run dir: its ledgers together, and the largest other file.
struct RunDirSizes {
  std::uintmax_t ledger = 0;
  std::uintmax_t largest_other = 0;
  std::uintmax_t largest_checkpoint_file = 0;  // under artifacts/checkpoints (0 when none)
  std::uintmax_t manifest = 0;
};
RunDirSizes run_dir_sizes(const std::filesystem::path& run_dir);

// Each unit's last terminal record without t, seq, timing and worker, in plan order.
std::vector<nlohmann::json> comparable_terminal_records(const std::filesystem::path& run_dir);

// Empty when `run_dir` has exactly one terminal record per planned unit, no failure record, and terminal
// records equal to `reference` (comparable_terminal_records of an uninterrupted run); else what differs.
std::string resumed_run_difference(const std::filesystem::path& run_dir, const std::vector<nlohmann::json>& reference);

}  // namespace k3lab::testing
