#include "k3lab/experiments/registry.hpp"

#include <stdexcept>

#include "k3lab/core/schema.hpp"

// Each module defines exactly one factory, k3lab::experiments::<module>::make_experiment().
#define K3LAB_DECLARE_MODULE(module) \
  namespace k3lab::experiments::module { std::unique_ptr<Experiment> make_experiment(); }
K3LAB_DECLARE_MODULE(context_probe)
K3LAB_DECLARE_MODULE(agent_replay)
K3LAB_DECLARE_MODULE(hybrid_attention)
K3LAB_DECLARE_MODULE(attn_res)
K3LAB_DECLARE_MODULE(router_balance)
K3LAB_DECLARE_MODULE(situ_qat)
K3LAB_DECLARE_MODULE(per_head_muon)
K3LAB_DECLARE_MODULE(memory_pool)
#undef K3LAB_DECLARE_MODULE

namespace k3lab::experiments {
namespace {

struct Row {
  const char* id;
  std::unique_ptr<Experiment> (*make)();
};

// One row per protocol, in the seed's order. Adding an experiment: docs/adding-an-experiment.md.
constexpr Row kRows[] = {
    {"context-probe", context_probe::make_experiment},       {"agent-replay", agent_replay::make_experiment},
    {"hybrid-attention", hybrid_attention::make_experiment}, {"attn-res", attn_res::make_experiment},
    {"router-balance", router_balance::make_experiment},     {"situ-qat", situ_qat::make_experiment},
    {"per-head-muon", per_head_muon::make_experiment},       {"memory-pool", memory_pool::make_experiment},
};

std::vector<std::string> row_ids() {
  std::vector<std::string> ids;
  for (const auto& row : kRows) ids.emplace_back(row.id);
  return ids;
}

}  // namespace

std::unique_ptr<Experiment> make_experiment(const std::string& id) {
  for (const auto& row : kRows) {
    if (id == row.id) return row.make();
  }
  std::string message = "unknown experiment \"" + id + "\"";
  if (auto guess = core::did_you_mean(id, registry().ids)) message += "; did you mean \"" + *guess + "\"?";
  else message += "; `k3lab list` shows the experiment ids";
  throw std::invalid_argument(message);
}

const Catalog& registry() {
  static const Catalog catalog{row_ids(), [](const std::string& id) { return make_experiment(id); }};
  return catalog;
}

}  // namespace k3lab::experiments
