#include "k3lab/core/peer_group.hpp"

#include <cstdlib>
#include <string>

namespace k3lab::core {
namespace {

// A whole number in [minimum, maximum] from variable `name`; the error names the variable and the fix.
int parse_int(const std::string& name, const std::string& text, int minimum, int maximum, const std::string& hint) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw std::invalid_argument(name + "=\"" + text + "\" is not a whole number: " + hint);
  }
  if (value < minimum || value > maximum) {
    throw std::invalid_argument(name + "=" + text + " is out of range [" + std::to_string(minimum) + ", " +
                                std::to_string(maximum) + "]: " + hint);
  }
  return static_cast<int>(value);
}

}  // namespace

LaunchEnvironment launch_environment(const EnvLookup& lookup) {
  LaunchEnvironment env;
  constexpr int kMaxRanks = 1 << 20;
  if (const auto timeout = lookup("K3LAB_DIST_TIMEOUT")) {
    const int seconds = parse_int("K3LAB_DIST_TIMEOUT", *timeout, 1, 7 * 24 * 3600,
                                  "set it to the seconds a rank may wait for its peers (default " +
                                      std::to_string(kDefaultDistributedTimeout.count()) + ")");
    env.timeout = std::chrono::seconds(seconds);
  }

  std::string source;  // the variable that set the world size, for messages
  if (const auto world = lookup("WORLD_SIZE")) {
    env.launcher = "torchrun";
    env.world_size = parse_int("WORLD_SIZE", *world, 1, kMaxRanks, "set it to the number of ranks, or unset it to train in one process");
    source = "WORLD_SIZE=" + *world;
    const auto rank = lookup("RANK");
    if (!rank && env.world_size > 1) {
      throw std::invalid_argument(source + " is set but RANK is not: set RANK to this process's rank (0.." +
                                  std::to_string(env.world_size - 1) + "), as torchrun does, or unset WORLD_SIZE");
    }
    const std::string range_hint = "RANK must be below WORLD_SIZE (" + std::to_string(env.world_size) + ")";
    if (rank) env.rank = parse_int("RANK", *rank, 0, env.world_size - 1, range_hint);
    const auto local = lookup("LOCAL_RANK");
    env.local_rank = local ? parse_int("LOCAL_RANK", *local, 0, kMaxRanks, "set it to the rank within this node") : env.rank;
  } else if (const auto tasks = lookup("SLURM_STEP_NUM_TASKS")) {
    // srun sets it for every task of a job step; sbatch and salloc do not (their SLURM_NTASKS is the
    // allocation's, seen by a batch script that runs once).
    const int n = parse_int("SLURM_STEP_NUM_TASKS", *tasks, 1, kMaxRanks, "srun sets it; check the step's --ntasks");
    if (n > 1) {
      env.launcher = "srun";
      env.world_size = n;
      source = "srun, SLURM_STEP_NUM_TASKS=" + *tasks;
      const auto procid = lookup("SLURM_PROCID");
      if (!procid) throw std::invalid_argument(source + " but SLURM_PROCID is unset: start k3lab with srun, one per task");
      env.rank = parse_int("SLURM_PROCID", *procid, 0, n - 1,
                           "SLURM_PROCID must be below SLURM_STEP_NUM_TASKS (" + *tasks + ")");
      const auto local = lookup("SLURM_LOCALID");
      env.local_rank = local ? parse_int("SLURM_LOCALID", *local, 0, kMaxRanks, "srun sets it per task") : 0;
    }
  }
  if (env.world_size == 1) {
    env.rank = env.local_rank = 0;
    env.launcher = "single";
    return env;
  }

  const std::string why = "data-parallel training (" + source + ") needs ";
  const auto addr = lookup("MASTER_ADDR");
  if (!addr || addr->empty()) {
    throw std::invalid_argument(why + "MASTER_ADDR: export it as the host of rank 0 (one node: MASTER_ADDR=127.0.0.1; "
                                      "under Slurm: MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1))");
  }
  env.master_addr = *addr;
  const auto port = lookup("MASTER_PORT");
  if (!port || port->empty()) {
    throw std::invalid_argument(why + "MASTER_PORT: export it as a free TCP port on rank 0's host, e.g. MASTER_PORT=29500");
  }
  env.master_port = parse_int("MASTER_PORT", *port, 1, 65535, "set it to a free TCP port on rank 0's host, e.g. 29500");
  return env;
}

LaunchEnvironment launch_environment_from_process() {
  return launch_environment([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace k3lab::core
