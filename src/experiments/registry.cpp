#include <algorithm>
#include <stdexcept>

#include "k3lab/core/protocol.hpp"
#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/experiment.hpp"

#if __has_include("k3lab/experiments/context_probe.hpp")
#include "k3lab/experiments/context_probe.hpp"
#define K3LAB_HAS_context_probe 1
#endif
#if __has_include("k3lab/experiments/agent_replay.hpp")
#include "k3lab/experiments/agent_replay.hpp"
#define K3LAB_HAS_agent_replay 1
#endif
#if __has_include("k3lab/experiments/hybrid_attention.hpp")
#include "k3lab/experiments/hybrid_attention.hpp"
#define K3LAB_HAS_hybrid_attention 1
#endif
#if __has_include("k3lab/experiments/attn_res.hpp")
#include "k3lab/experiments/attn_res.hpp"
#define K3LAB_HAS_attn_res 1
#endif
#if __has_include("k3lab/experiments/router_balance.hpp")
#include "k3lab/experiments/router_balance.hpp"
#define K3LAB_HAS_router_balance 1
#endif
#if __has_include("k3lab/experiments/situ_qat.hpp")
#include "k3lab/experiments/situ_qat.hpp"
#define K3LAB_HAS_situ_qat 1
#endif
#if __has_include("k3lab/experiments/per_head_muon.hpp")
#include "k3lab/experiments/per_head_muon.hpp"
#define K3LAB_HAS_per_head_muon 1
#endif
#if __has_include("k3lab/experiments/memory_pool.hpp")
#include "k3lab/experiments/memory_pool.hpp"
#define K3LAB_HAS_memory_pool 1
#endif

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_experiment(const std::string& id) {
#define K3LAB_CASE(name, text) \
  if (id == text) return make_##name##_experiment();
#ifdef K3LAB_HAS_context_probe
  K3LAB_CASE(context_probe, "context-probe")
#endif
#ifdef K3LAB_HAS_agent_replay
  K3LAB_CASE(agent_replay, "agent-replay")
#endif
#ifdef K3LAB_HAS_hybrid_attention
  K3LAB_CASE(hybrid_attention, "hybrid-attention")
#endif
#ifdef K3LAB_HAS_attn_res
  K3LAB_CASE(attn_res, "attn-res")
#endif
#ifdef K3LAB_HAS_router_balance
  K3LAB_CASE(router_balance, "router-balance")
#endif
#ifdef K3LAB_HAS_situ_qat
  K3LAB_CASE(situ_qat, "situ-qat")
#endif
#ifdef K3LAB_HAS_per_head_muon
  K3LAB_CASE(per_head_muon, "per-head-muon")
#endif
#ifdef K3LAB_HAS_memory_pool
  K3LAB_CASE(memory_pool, "memory-pool")
#endif
#undef K3LAB_CASE
  const auto& ids = core::experiment_ids();
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
    throw std::logic_error("experiment \"" + id + "\" has no module in this build; rebuild with scripts/setup.sh");
  }
  std::string message = "unknown experiment \"" + id + "\"";
  if (auto guess = core::did_you_mean(id, core::experiment_ids())) message += "; did you mean \"" + *guess + "\"?";
  else message += "; `k3lab list` shows the eight experiment ids";
  throw std::invalid_argument(message);
}

}  // namespace k3lab::experiments
