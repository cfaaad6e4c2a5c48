#include "rank_agreement.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <torch/torch.h>

namespace k3lab::train {
namespace {

// Failure classes a rank reports to its peers, as codes (index; 0: none).
const std::vector<std::string> kAgreedFailures = {"", "nan-loss", "oom"};

}  // namespace

std::vector<double> rank_slots(int world, int rank, double value) {
  std::vector<double> slots(static_cast<std::size_t>(world), 0.0);
  slots[static_cast<std::size_t>(rank)] = value;
  return slots;
}

double failure_code(const std::optional<StepFailure>& failure) {
  if (!failure) return 0.0;
  const auto it = std::find(kAgreedFailures.begin(), kAgreedFailures.end(), failure->failure_class);
  return static_cast<double>(it - kAgreedFailures.begin());
}

std::optional<StepFailure> agreed_failure(const std::vector<double>& codes, const std::vector<double>& values,
                                          const std::optional<StepFailure>& local, int rank, const std::string& where) {
  const int world = static_cast<int>(codes.size());
  for (int k = 0; k < world; ++k) {
    const auto code = static_cast<std::size_t>(codes[static_cast<std::size_t>(k)]);
    if (code == 0) continue;
    const std::string of = " (rank " + std::to_string(k) + " of " + std::to_string(world) + ")";
    if (k == rank && local) return StepFailure{local->failure_class, local->detail + of};
    const std::string failure_class = code < kAgreedFailures.size() ? kAgreedFailures[code] : "failure";
    std::string detail = failure_class + " on rank " + std::to_string(k) + " of " + std::to_string(world) + " " + where;
    if (failure_class == "nan-loss") detail += ": training loss " + std::to_string(values[static_cast<std::size_t>(k)]);
    return StepFailure{failure_class, detail};
  }
  return std::nullopt;
}

void synchronize_start(DistributedContext& dist, torch::nn::Module& model, std::int64_t step) {
  const auto steps = dist.all_reduce_sum(rank_slots(dist.world_size(), dist.rank(), static_cast<double>(step)));
  for (int k = 1; k < dist.world_size(); ++k) {
    if (steps[static_cast<std::size_t>(k)] != steps[0]) {
      throw std::runtime_error("trainer: rank " + std::to_string(k) + " resumes at step " +
                               std::to_string(static_cast<std::int64_t>(steps[static_cast<std::size_t>(k)])) +
                               " but rank 0 at step " + std::to_string(static_cast<std::int64_t>(steps[0])) +
                               ": checkpoint_dir must be one folder every rank sees (shared storage)");
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.parameters()) {
    auto data = parameter.data();
    dist.broadcast_from_root(data);
  }
}

void all_reduce_gradients(DistributedContext& dist, torch::nn::Module& model) {
  std::vector<torch::Tensor> grads;  // the same set on every rank: same model, same code path
  for (const auto& parameter : model.parameters()) {
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  }
  if (grads.empty()) return;
  std::vector<torch::Tensor> flat;
  flat.reserve(grads.size());
  for (const auto& g : grads) flat.push_back(g.reshape({-1}).to(torch::kFloat32));
  auto buffer = torch::cat(flat);  // (total gradient elements,) float32
  dist.all_reduce_sum(buffer);
  buffer.div_(static_cast<double>(dist.world_size()));
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(buffer.narrow(0, offset, g.numel()).view_as(g));
    offset += g.numel();
  }
}

}  // namespace k3lab::train
