#include "fault_support.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "common/ledger_compare.hpp"
#include "common/ledger_records.hpp"
#include "smoke/smoke_support.hpp"

namespace k3lab::testing {
namespace {

// bash sets the limit in the child it then replaces with k3lab (`exec`): `ulimit -f` counts KiB, and an
// ignored signal stays ignored across exec.
constexpr const char* kFileSizeLimitScript = R"sh(trap '' XFSZ; ulimit -f "$1"; shift; exec "$@")sh";

// $1 the clock ("caught" or "exec"), $2 seconds to SIGTERM, $3 milliseconds from SIGTERM to SIGKILL (less
// once k3lab has ended), then the command. "caught" counts from the moment k3lab's stop handler is
// installed and SIGTERM is not blocked (bit 15 set in SigCgt and clear in SigBlk of /proc/<pid>/status):
// the time the binary takes to load LibTorch does not decide where a signal lands. "exec" counts from
// the moment the child is k3lab, no longer the forked bash: the signal then lands in start-up (LibTorch
// loading, main, the OpenMP restart's exec, the second load). Builtins only while the child runs
// (`read -t` on a pipe that never delivers is the wait), so the polling takes no CPU from it. When k3lab
// dies of SIGTERM, the script prints what /proc showed as it sent the signal: name, SigBlk, SigCgt.
constexpr const char* kStopScript = R"sh(
clock=$1; term_after=$2; kill_after_ms=$3; shift 3
"$@" &
pid=$!
exec {never}<> <(:)
status_value() {  # sets $value to line $1 of /proc/<pid>/status; fails once the process is reaped
  local key
  while read -r key value; do [ "$key" = "$1" ] && return 0; done < "/proc/$pid/status"
  return 1
}
ended() { kill -0 "$pid" 2>/dev/null || return 0; status_value State: && [ "${value:0:1}" = Z ]; }
term_bit() { status_value "$1" && (( 16#$value & 16#4000 )); }
# The forked bash child may still hold bash's own handlers before it execs the binary: the process's
# name must be the binary's too.
ready() {
  local name
  read -r name < "/proc/$pid/comm" && [ "$name" != bash ] || return 1
  [ "$clock" = exec ] || { term_bit SigCgt: && ! term_bit SigBlk:; }
}
until ended 2>/dev/null || ready 2>/dev/null; do read -rt 0.01 -u "$never"; done
read -rt "$term_after" -u "$never"
seen=$(cat "/proc/$pid/comm" 2>&1; grep -E '^(SigBlk|SigCgt):' "/proc/$pid/status" 2>&1)
kill -TERM "$pid" 2>/dev/null
for ((step = 0; step < kill_after_ms / 10; ++step)); do
  ended 2>/dev/null && break
  read -rt 0.01 -u "$never"
done
kill -KILL "$pid" 2>/dev/null
wait "$pid"; status=$?
(( status == 143 )) && echo "stop script: SIGTERM was sent while /proc showed:" $seen"." >&2
exit $status)sh";

std::vector<std::string> with_binary(std::vector<std::string> head, const std::vector<std::string>& args) {
  head.push_back(k3lab_binary().string());
  head.insert(head.end(), args.begin(), args.end());
  return head;
}

std::string seconds(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << value;
  return out.str();
}

}  // namespace

std::vector<std::string> FaultExperiment::run_arguments(const std::filesystem::path& runs_root) const {
  std::vector<std::string> args = {"run", id, "--profile", "smoke", "--out", runs_root.string()};
  args.insert(args.end(), {"--device", "cpu", "--threads", "1"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const FaultExperiment& api_experiment() {
  static const FaultExperiment experiment{"context-probe", {}};
  return experiment;
}

const FaultExperiment& simulator_experiment() {
  static const FaultExperiment experiment{"memory-pool", {}};
  return experiment;
}

// Half the smoke model's width and budgets: 27 units in a few seconds, checkpoints (~90 KiB) smaller than
// the ledger (~200 KiB), so a file size limit between the two falls mid-run on the ledger.
const FaultExperiment& training_experiment() {
  static const FaultExperiment experiment{
      "per-head-muon",
      {"--unfrozen", "--set", "model.d_model=16", "model.head_dim=8", "model.ffn_hidden=32", "token_budget=256",
       "pilot_token_budget=256", "eval_interval_tokens=128", "downstream.at_tokens=[128,256]"}};
  return experiment;
}

void PrintTo(const FaultExperiment& experiment, std::ostream* out) { *out << experiment.id; }

ProcessOptions fault_environment(const std::filesystem::path& cwd) {
  auto options = hermetic(cwd);
  options.env["K3LAB_LEASE_SECONDS"] = std::nullopt;
  return options;
}

ProcessResult run_k3lab_with_file_size_limit(const std::vector<std::string>& args, std::uintmax_t limit_bytes,
                                             const ProcessOptions& options) {
  return run_program(
      "/bin/bash",
      with_binary({"-c", kFileSizeLimitScript, "file-size-limit", std::to_string(limit_bytes / 1024)}, args),
      with_passive_openmp(options));
}

ProcessResult run_k3lab_stopped(const std::vector<std::string>& args, StopClock clock, double term_after_s,
                                double kill_after_s, const ProcessOptions& options) {
  const std::string clock_word = clock == StopClock::kFromExec ? "exec" : "caught";
  return run_program("/bin/bash",
                     with_binary({"-c", kStopScript, "stop", clock_word, seconds(term_after_s),
                                  std::to_string(std::lround(kill_after_s * 1000))},
                                 args),
                     with_passive_openmp(options));
}

RunDirSizes run_dir_sizes(const std::filesystem::path& run_dir) {
  RunDirSizes sizes;
  for (const auto& file : ledger_files(run_dir)) sizes.ledger += std::filesystem::file_size(file);
  const auto ledgers = ledger_files(run_dir);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run_dir)) {
    if (!entry.is_regular_file()) continue;
    if (std::find(ledgers.begin(), ledgers.end(), entry.path()) != ledgers.end()) continue;
    const auto size = entry.file_size();
    sizes.largest_other = std::max(sizes.largest_other, size);
    const auto relative = entry.path().lexically_relative(run_dir).generic_string();
    if (relative.starts_with("artifacts/checkpoints/")) {
      sizes.largest_checkpoint_file = std::max(sizes.largest_checkpoint_file, size);
    }
    if (relative == "manifest.json") sizes.manifest = size;
  }
  return sizes;
}

std::vector<nlohmann::json> comparable_terminal_records(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> out;
  for (const auto& record : last_terminal_records(read_ledger_records(run_dir))) {
    out.push_back(deterministic_part(record));
  }
  return out;
}

std::string resumed_run_difference(const std::filesystem::path& run_dir, const std::vector<nlohmann::json>& reference) {
  const auto records = read_ledger_records(run_dir);
  std::ostringstream problems;
  for (const auto& record : records) {
    if (record.value("kind", "") == "failure") problems << "a failure record: " << record.dump() << "\n";
  }
  const auto counts = terminal_counts(records);
  for (const auto& unit : planned_units(records)) {
    const auto found = counts.find(unit);
    const int count = found == counts.end() ? 0 : found->second;
    if (count != 1) problems << "unit " << unit << " has " << count << " terminal records\n";
  }
  std::vector<nlohmann::json> actual;
  for (const auto& record : last_terminal_records(records)) actual.push_back(deterministic_part(record));
  problems << ledger_difference(reference, actual);
  return problems.str();
}

}  // namespace k3lab::testing
