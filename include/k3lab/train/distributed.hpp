#pragma once
// Data-parallel training across processes ("ranks") with LibTorch's c10d: how a process learns its
// place from the launcher's environment, joins the group, and the few collectives the trainer uses.
//
// How a process finds its rank: core/peer_group.hpp.
// Rendezvous is a c10d::TCPStore served by rank 0 at MASTER_ADDR:MASTER_PORT. The backend is Gloo for
// CPU tensors and NCCL for CUDA tensors when LibTorch was built with NCCL (K3LAB_C10D_NCCL).
// A killed peer shows as a closed connection at once; a hung one after the timeout. Either way the
// collective throws RankFailure, and the group is unusable afterwards (Gloo closes every connection
// of a failed collective), so every later collective throws RankFailure at once.
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>
#include <torch/version.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "k3lab/core/peer_group.hpp"
#include "k3lab/train/peer_group_factory.hpp"
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace k3lab::train {

// LibTorch 2 made the per-backend group (ProcessGroupGloo, ProcessGroupNCCL) a c10d::Backend; in
// 1.13 it is a c10d::ProcessGroup. Both offer the same collectives.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif

using core::EnvLookup;
using core::kDefaultDistributedTimeout;
using core::launch_environment;
using core::launch_environment_from_process;
using core::LaunchEnvironment;
using core::RankFailure;

class DistributedContext final : public core::PeerGroup {
 public:
  // Joins the group: blocks until every rank has joined, or throws std::runtime_error after the
  // timeout saying which address it waited on. `device`: where training runs and the collectives'
  // tensors live (CPU: Gloo; CUDA: NCCL, or std::invalid_argument when this build has none). On CUDA
  // each rank takes GPU local_rank modulo the visible GPUs, whatever index `device` names.
  // World size 1 connects nothing.
  DistributedContext(const LaunchEnvironment& environment, const torch::Device& device);
  ~DistributedContext();
  DistributedContext(const DistributedContext&) = delete;
  DistributedContext& operator=(const DistributedContext&) = delete;

  int rank() const override { return environment_.rank; }
  int world_size() const override { return environment_.world_size; }
  int local_rank() const { return environment_.local_rank; }
  const LaunchEnvironment& environment() const { return environment_; }
  const torch::Device& device() const { return device_; }
  const std::string& backend() const override { return backend_; }  // none (world size 1) | gloo | nccl
  std::string device_name() const override { return device_.str(); }
  // Null for world size 1.
  const c10::intrusive_ptr<CollectiveGroup>& process_group() const { return group_; }
  // Set once a collective has failed; the message of that failure.
  const std::optional<std::string>& failure() const override { return failure_; }

  // In place, on every rank; no-ops for world size 1. Throw RankFailure.
  void all_reduce_sum(torch::Tensor& tensor);
  void broadcast_from_root(torch::Tensor& tensor);
  void barrier() override;
  // Sums each rank's values element-wise (float64; every rank passes the same count).
  std::vector<double> all_reduce_sum(const std::vector<double>& values);

  // Rank 0 publishes `value` under `key` (once per key) and returns it; every other rank waits up to
  // `timeout` for it and returns it. Goes through the store, so a long wait (rank 0 measuring,
  // writing records) does not break the group, and it works after a failed collective. Throws
  // RankFailure when rank 0 is gone or the wait times out.
  std::string share_from_root(const std::string& key, const std::string& value,
                              std::chrono::milliseconds timeout) override;
  // Whether rank 0 (which serves the store) still answers: after a RankFailure, tells a surviving
  // rank whether rank 0 is alive to record it.
  bool root_reachable() override;

 private:
  void run(const std::string& what, const std::function<void()>& collective);

  LaunchEnvironment environment_;
  torch::Device device_;
  std::string backend_ = "none";
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<CollectiveGroup> group_;
  std::optional<std::string> failure_;
};

// The c10d group behind a run's peer group (RunEnv::distributed), or null when the command runs as one
// process. Every PeerGroup the k3lab binary creates is a DistributedContext (train::make_peer_group).
DistributedContext* as_distributed(core::PeerGroup* group);

}  // namespace k3lab::train
