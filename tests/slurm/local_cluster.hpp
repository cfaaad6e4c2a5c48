#pragma once
// What the real-cluster tests share: the one-node Slurm of scripts/slurm-local.sh, a work folder that
// runs k3lab and the Slurm commands, and readers of run dirs and /proc.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"
#include "k3lab/exec/command.hpp"
#include "k3lab/exec/slurm_state.hpp"

namespace k3lab::slurm_testing {

// Why this machine cannot start the local cluster (not root, a tool missing), or nullopt.
std::optional<std::string> cannot_start_cluster(bool needs_srun = false);

// Starts the local cluster unless it already runs; stops it at the end in every case unless it was
// already running before (someone else's). `env` reaches scripts/slurm-local.sh (K3LAB_SLURMD_TIMEOUT).
class LocalSlurm {
 public:
  explicit LocalSlurm(std::map<std::string, std::string> env = {});
  ~LocalSlurm();
  LocalSlurm(const LocalSlurm&) = delete;
  LocalSlurm& operator=(const LocalSlurm&) = delete;
  bool ok() const { return ok_; }
  bool was_running() const { return was_running_; }
  const std::string& log() const { return log_; }
  std::filesystem::path conf() const { return dir_ / "slurm.conf"; }
  // Stops slurmd alone (SIGTERM), as on a node whose daemon died: the tasks' processes live on.
  bool stop_slurmd() const;
  // Starts what is not running (here: slurmd) and waits until the node takes jobs again.
  bool start_again() const;

 private:
  exec::CommandResult script(const std::string& command) const;

  std::map<std::string, std::string> env_;
  std::filesystem::path dir_;
  bool was_running_ = false;
  bool ok_ = false;
  std::string log_;
};

// A temporary folder holding a copy of the protocols (K3LAB_PROTOCOL_DIR), where k3lab and the Slurm
// commands run with `env`.
struct Workdir {
  Workdir();
  k3lab::testing::TempDir dir;
  std::map<std::string, std::string> env;

  exec::CommandResult k3lab(const std::vector<std::string>& args) const;
  exec::CommandResult slurm(std::vector<std::string> argv) const;
  exec::TaskStates states(const std::string& job) const;
  // Waits until no task of `job` is queued or running.
  bool wait_until_ended(const std::string& job, std::chrono::seconds limit) const;
};

// The job id in a submission's output ("...\njob <id>\n"), or "".
std::string job_id_of(const std::string& output);
// The run dir's terminal records in plan order, each without t, seq, timing, worker and hardware.
std::vector<nlohmann::json> terminal(const std::filesystem::path& run_dir);
// Terminal records in one ledger shard.
std::size_t terminal_count(const std::filesystem::path& shard);
// The pid of the k3lab process writing `worker`'s shard (read from /proc; 0 when none).
pid_t k3lab_process_of(const std::string& worker);
// The k3lab process of `worker` whose SLURM_PROCID is `rank` (0 when none).
pid_t k3lab_rank_process(const std::string& worker, int rank);

}  // namespace k3lab::slurm_testing
