#include "k3lab/train/distributed.hpp"

#include "k3lab/core/broken_pipe.hpp"
#include "k3lab/train/device.hpp"

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

// c10::Error's what() carries a C++ backtrace; a user needs the first line.
std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

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

  core::survive_broken_pipes();  // a peer dying mid-send must fail the collective, not kill this rank
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

DistributedContext* as_distributed(core::PeerGroup* group) {
  if (!group) return nullptr;
  auto* context = dynamic_cast<DistributedContext*>(group);
  if (!context) throw std::logic_error("a data-parallel unit needs the training layer's peer group (train::make_peer_group)");
  return context;
}

std::unique_ptr<core::PeerGroup> make_peer_group(const core::LaunchEnvironment& launch, const std::string& device) {
  return std::make_unique<DistributedContext>(launch, resolve_device(device));
}

}  // namespace k3lab::train
