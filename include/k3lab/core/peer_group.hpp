#pragma once
// How a process learns its place among the ranks of a data-parallel launch, and what the generic
// runner needs of the group those ranks form. Torch-free: the runner, the CLI and the Slurm executor
// use it; the training layer implements PeerGroup with LibTorch's c10d (train/distributed.hpp).
//
// Launchers, the first that applies:
//   torchrun style  WORLD_SIZE, RANK, LOCAL_RANK (default: RANK), MASTER_ADDR, MASTER_PORT
//   srun            SLURM_STEP_NUM_TASKS > 1 (set by srun only, not in a batch script that runs
//                   once), SLURM_PROCID, SLURM_LOCALID (default 0), with MASTER_ADDR and MASTER_PORT
//                   exported by the job script (Slurm has no such variables)
//   neither         one process: world size 1, no store, no backend
// K3LAB_DIST_TIMEOUT (seconds, default kDefaultDistributedTimeout) bounds rendezvous and every
// collective.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace k3lab::core {

// Long enough for rank 0 to write a checkpoint while the other ranks wait in the next collective.
inline constexpr std::chrono::seconds kDefaultDistributedTimeout{300};

struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
  std::string launcher = "single";  // single | torchrun | srun
  std::chrono::milliseconds timeout = kDefaultDistributedTimeout;
};

// Looks up one environment variable (nullopt: unset). A seam so tests need not touch the process env.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Throws std::invalid_argument naming the variable to set or fix (missing, malformed, out of range).
LaunchEnvironment launch_environment(const EnvLookup& lookup);
LaunchEnvironment launch_environment_from_process();

// A collective failed: a peer rank died, hung past the timeout, or the group already broke.
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The ranks of one data-parallel command. Everything here throws RankFailure when a peer is gone.
class PeerGroup {
 public:
  virtual ~PeerGroup() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  bool is_root() const { return rank() == 0; }
  virtual const std::string& backend() const = 0;  // none (world size 1) | gloo | nccl
  virtual std::string device_name() const = 0;     // where the ranks train, e.g. "cpu", "cuda:0"
  // Set once a collective has failed; the message of that failure.
  virtual const std::optional<std::string>& failure() const = 0;
  virtual void barrier() = 0;
  // Rank 0 publishes `value` under `key` (once per key) and returns it; every other rank waits up to
  // `timeout` for it and returns it. Works after a failed collective.
  virtual std::string share_from_root(const std::string& key, const std::string& value,
                                      std::chrono::milliseconds timeout) = 0;
  // Whether rank 0 still answers (after a RankFailure: can it record the failure?).
  virtual bool root_reachable() = 0;
};

// Joins the group a launch describes; `device` is the run's --device option ("auto", "cpu", "cuda"...).
using PeerGroupFactory =
    std::function<std::unique_ptr<PeerGroup>(const LaunchEnvironment& launch, const std::string& device)>;

}  // namespace k3lab::core
