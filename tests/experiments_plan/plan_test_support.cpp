#include "plan_test_support.hpp"

#include <atomic>
#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <unistd.h>

#include "k3lab/experiments/agent_replay.hpp"
#include "k3lab/experiments/attn_res.hpp"
#include "k3lab/experiments/context_probe.hpp"
#include "k3lab/experiments/hybrid_attention.hpp"
#include "k3lab/experiments/per_head_muon.hpp"
#include "k3lab/experiments/router_balance.hpp"
#include "k3lab/experiments/situ_qat.hpp"

namespace k3lab::experiments::plan_test {

const std::vector<Case>& cases() {
  // Unit counts are the seed's own arithmetic, not derived from the modules.
  static const std::vector<Case> all = {
      {"context-probe", &make_context_probe_experiment, 1800, {"cold", "warm"},
       {"/model", "/reasoning_effort", "/families", "/order_seed", "/test_window_hours", "/invalid_fraction_limit",
        "/decision_confidence", "/transport_retries", "/pricing"},
       "repetitions"},
      {"agent-replay", &make_agent_replay_experiment, 504,
       {"control", "content-only", "effort-change", "omitted-tool-result", "truncated-completion",
        "no-idempotency-key", "reordered-tools"},
       {"/model", "/reasoning_effort", "/max_model_turns", "/test_window_hours", "/transport_retries",
        "/invalid_fraction_limit_per_arm", "/faults", "/analysis", "/pricing"},
       "task_count"},
      {"hybrid-attention", &make_hybrid_attention_experiment, 9, {"full-attention", "all-kda", "hybrid-3kda-1mla"},
       {"/seeds", "/parameter_tolerance", "/safety_timeout_hours", "/optimizer", "/data/order_seed"},
       "token_budget"},
      {"attn-res", &make_attn_res_experiment, 15, {"ordinary-residual", "full-attnres", "block-attnres"},
       {"/seeds", "/decision", "/optimizer", "/data/order_seed"},
       "attnres_block_layers"},
      {"router-balance", &make_router_balance_experiment, 20,
       {"no-control", "aux-loss", "fixed-step-bias", "quantile-balancing"},
       {"/seeds", "/capacity_factor", "/model/router_activation", "/optimizer", "/aux_loss", "/fixed_step_bias",
        "/quantile_balancing", "/decision", "/data/order_seed"},
       "measured_updates"},
      {"situ-qat", &make_situ_qat_experiment, 10, {"swiglu", "situ-glu"},
       {"/seeds", "/situ", "/quantization", "/saturation_tanh_level", "/loss_spike/threshold_sigma", "/optimizer",
        "/analysis", "/data/order_seed"},
       "token_budget"},
      {"per-head-muon", &make_per_head_muon_experiment, 63, {"adamw", "muon", "per-head-muon"},
       {"/pilot_seeds", "/confirmatory_seeds", "/muon", "/adamw", "/schedule", "/decision", "/data/order_seed"},
       "pilot_token_budget"},
  };
  return all;
}

const Case& case_for(const std::string& id) {
  for (const auto& c : cases()) {
    if (c.id == id) return c;
  }
  throw std::invalid_argument("no test case for " + id);
}

std::filesystem::path protocol_file(const std::string& id) {
  return std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments" / (id + ".json");
}

core::Protocol load(const Case& c) {
  auto experiment = c.make();
  return core::load_protocol(protocol_file(c.id), &experiment->parameter_schema());
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return nlohmann::json::parse(in);
}

std::filesystem::path write_copy(const std::string& id, const nlohmann::json& document) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("k3lab-plan-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  const auto file = dir / (id + ".json");
  std::ofstream(file) << document.dump(2);
  return file;
}

std::vector<core::SchemaIssue> load_issues(const Case& c, const nlohmann::json& document) {
  const auto file = write_copy(c.id, document);
  auto experiment = c.make();
  try {
    core::load_protocol(file, &experiment->parameter_schema());
  } catch (const core::ProtocolError& e) {
    std::filesystem::remove_all(file.parent_path());
    return e.issues();
  }
  std::filesystem::remove_all(file.parent_path());
  ADD_FAILURE() << c.id << ": the broken copy loaded without a problem";
  return {};
}

std::vector<std::string> unit_arms(const std::vector<Unit>& units) {
  std::vector<std::string> arms;
  for (const auto& u : units) arms.push_back(u.spec.at("arm").get<std::string>());
  return arms;
}

}  // namespace k3lab::experiments::plan_test
