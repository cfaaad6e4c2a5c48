#include "k3lab/train/distributed.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace k3lab::train {
namespace {

const char* const kKeyPrefix = "k3lab/";

std::string to_string(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::vector<std::uint8_t> to_bytes(const std::string& text) { return {text.begin(), text.end()}; }

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

// c10::Error's what() carries a C++ backtrace; a user needs the first line.
std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
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

DistributedContext::DistributedContext(const LaunchEnvironment& environment, const torch::Device& device)
    : environment_(environment), device_(device) {
  if (environment_.world_size == 1) return;
  const int rank = environment_.rank;
  const int world = environment_.world_size;
  const std::string where = environment_.master_addr + ":" + std::to_string(environment_.master_port);

  if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
    const auto visible = static_cast<int>(torch::cuda::device_count());
    device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(environment_.local_rank % std::max(visible, 1)));
#else
    throw std::invalid_argument(
        "data-parallel training on CUDA needs c10d's NCCL backend, which this build lacks (LibTorch without NCCL, or "
        "configured without -DK3LAB_C10D_NCCL=ON): build against a CUDA LibTorch with NCCL, or train on CPU with Gloo "
        "(--device cpu)");
#endif
  } else if (device.is_cpu()) {
#ifndef USE_C10D_GLOO
    throw std::invalid_argument(
        "data-parallel training on CPU needs c10d's Gloo backend, but this build found no gloo headers: install "
        "libgloo-dev (scripts/setup.sh does) and reconfigure");
#endif
  } else {
    throw std::invalid_argument("data-parallel training supports cpu and cuda devices only");
  }

  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(environment_.master_port);
    options.isServer = rank == 0;
    options.numWorkers = static_cast<std::size_t>(world);
    options.waitWorkers = true;
    options.timeout = environment_.timeout;
    store_ = c10::make_intrusive<c10d::TCPStore>(environment_.master_addr, options);
    if (device_.is_cpu()) {
#ifdef USE_C10D_GLOO
      auto gloo = c10d::ProcessGroupGloo::Options::create(environment_.timeout);
      // GLOO_SOCKET_IFNAME picks the interface as in PyTorch; a loopback master means one host.
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (is_loopback(environment_.master_addr)) {
        gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(environment_.master_addr));
      } else {
        gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, rank, world, gloo);
      backend_ = "gloo";
#endif
    } else {
#ifdef USE_C10D_NCCL
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = environment_.timeout;
      group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, rank, world, nccl);
      backend_ = "nccl";
#endif
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(rank) + " of " + std::to_string(world) +
                             " could not join the data-parallel group at " + where + " within " +
                             std::to_string(environment_.timeout.count() / 1000) + " s (" + message_of(e) +
                             "): start all " + std::to_string(world) +
                             " ranks, with MASTER_ADDR naming rank 0's host and MASTER_PORT free there");
  }
}

DistributedContext::~DistributedContext() = default;

void DistributedContext::run(const std::string& what, const std::function<void()>& collective) {
  if (failure_) throw RankFailure("the data-parallel group broke earlier: " + *failure_);
  try {
    collective();
  } catch (const std::exception& e) {
    const std::string peer = world_size() == 2 ? "rank " + std::to_string(1 - rank()) : "a peer rank";
    failure_ = "rank " + std::to_string(rank()) + " of " + std::to_string(world_size()) + ": " + what + " failed (" +
               message_of(e) + "); " + peer + " died or stopped answering within " +
               std::to_string(environment_.timeout.count() / 1000) + " s";
    throw RankFailure(*failure_);
  }
}

void DistributedContext::all_reduce_sum(torch::Tensor& tensor) {
  if (!group_) return;
  run("all-reduce", [&] {
    std::vector<torch::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    group_->allreduce(tensors, options)->wait();
  });
}

void DistributedContext::broadcast_from_root(torch::Tensor& tensor) {
  if (!group_) return;
  run("broadcast", [&] {
    std::vector<torch::Tensor> tensors{tensor};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    group_->broadcast(tensors, options)->wait();
  });
}

void DistributedContext::barrier() {
  if (!group_) return;
  run("barrier", [&] { group_->barrier()->wait(); });
}

std::vector<double> DistributedContext::all_reduce_sum(const std::vector<double>& values) {
  if (!group_) return values;
  // (n,) float64 on the collective's device (NCCL carries CUDA tensors only).
  auto tensor = torch::tensor(values, torch::kFloat64).to(device_);
  all_reduce_sum(tensor);
  tensor = tensor.cpu();
  return {tensor.data_ptr<double>(), tensor.data_ptr<double>() + tensor.numel()};
}

std::string DistributedContext::share_from_root(const std::string& key, const std::string& value,
                                                std::chrono::milliseconds timeout) {
  if (!store_) return value;
  // The store is independent of the backend's connections, so it still works after a failed collective.
  const std::string full = kKeyPrefix + key;
  try {
    if (is_root()) {
      store_->set(full, to_bytes(value));
      return value;
    }
    store_->wait({full}, timeout);
    return to_string(store_->get(full));
  } catch (const std::exception& e) {
    throw RankFailure("rank " + std::to_string(rank()) + " of " + std::to_string(world_size()) + ": " +
                      (is_root() ? "publishing " : "waiting for rank 0's ") + key + " failed (" + message_of(e) +
                      "); rank 0 died or stopped answering");
  }
}

bool DistributedContext::root_reachable() {
  if (!store_ || is_root()) return true;
  try {
    store_->check({std::string(kKeyPrefix) + "alive"});
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace k3lab::train
