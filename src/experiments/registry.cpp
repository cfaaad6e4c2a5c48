#include <algorithm>
#include <stdexcept>

#include "k3lab/core/protocol.hpp"
#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/agent_replay.hpp"
#include "k3lab/experiments/attn_res.hpp"
#include "k3lab/experiments/context_probe.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/hybrid_attention.hpp"
#include "k3lab/experiments/memory_pool.hpp"
#include "k3lab/experiments/per_head_muon.hpp"
#include "k3lab/experiments/router_balance.hpp"
#include "k3lab/experiments/situ_qat.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_experiment(const std::string& id) {
  if (id == "context-probe") return make_context_probe_experiment();
  if (id == "agent-replay") return make_agent_replay_experiment();
  if (id == "hybrid-attention") return make_hybrid_attention_experiment();
  if (id == "attn-res") return make_attn_res_experiment();
  if (id == "router-balance") return make_router_balance_experiment();
  if (id == "situ-qat") return make_situ_qat_experiment();
  if (id == "per-head-muon") return make_per_head_muon_experiment();
  if (id == "memory-pool") return make_memory_pool_experiment();
  std::string message = "unknown experiment \"" + id + "\"";
  if (auto guess = core::did_you_mean(id, core::experiment_ids())) message += "; did you mean \"" + *guess + "\"?";
  else message += "; `k3lab list` shows the eight experiment ids";
  throw std::invalid_argument(message);
}

}  // namespace k3lab::experiments
