#include "plan_test_support.hpp"

#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/experiments/registry.hpp"


namespace k3lab::experiments::plan_test {

const std::vector<Case>& cases() {
  // Unit counts are the seed's own arithmetic, not derived from the modules.
  static const std::vector<Case> all = {
      {"context-probe", [] { return make_experiment("context-probe"); }, 1800, {"cold", "warm"},
       {"/model", "/reasoning_effort", "/families", "/order_seed", "/test_window_hours", "/invalid_fraction_limit",
        "/decision_confidence", "/transport_retries", "/pricing"},
       "repetitions"},
      {"agent-replay", [] { return make_experiment("agent-replay"); }, 504,
       {"control", "content-only", "effort-change", "omitted-tool-result", "truncated-completion",
        "no-idempotency-key", "reordered-tools"},
       {"/model", "/reasoning_effort", "/max_model_turns", "/test_window_hours", "/transport_retries",
        "/invalid_fraction_limit_per_arm", "/faults", "/analysis", "/pricing"},
       "task_count"},
      {"hybrid-attention", [] { return make_experiment("hybrid-attention"); }, 9, {"full-attention", "all-kda", "hybrid-3kda-1mla"},
       {"/seeds", "/parameter_tolerance", "/safety_timeout_hours", "/optimizer", "/data/order_seed"},
       "token_budget"},
      {"attn-res", [] { return make_experiment("attn-res"); }, 15, {"ordinary-residual", "full-attnres", "block-attnres"},
       {"/seeds", "/decision", "/optimizer", "/data/order_seed"},
       "attnres_block_layers"},
      {"router-balance", [] { return make_experiment("router-balance"); }, 20,
       {"no-control", "aux-loss", "fixed-step-bias", "quantile-balancing"},
       {"/seeds", "/capacity_factor", "/model/router_activation", "/optimizer", "/aux_loss", "/fixed_step_bias",
        "/quantile_balancing", "/decision", "/data/order_seed"},
       "measured_updates"},
      {"situ-qat", [] { return make_experiment("situ-qat"); }, 10, {"swiglu", "situ-glu"},
       {"/seeds", "/situ", "/quantization", "/saturation_tanh_level", "/loss_spike/threshold_sigma", "/optimizer",
        "/analysis", "/data/order_seed"},
       "token_budget"},
      {"per-head-muon", [] { return make_experiment("per-head-muon"); }, 63, {"adamw", "muon", "per-head-muon"},
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

std::vector<core::SchemaIssue> load_issues(const Case& c, const nlohmann::json& document) {
  const k3lab::testing::TempDir dir("k3lab-plan-test");
  const auto file = dir.write(c.id + ".json", document.dump(2));
  auto experiment = c.make();
  try {
    core::load_protocol(file, &experiment->parameter_schema());
  } catch (const core::ProtocolError& e) {
    return e.issues();
  }
  ADD_FAILURE() << c.id << ": the broken copy loaded without a problem";
  return {};
}

std::vector<std::string> unit_arms(const std::vector<Unit>& units) {
  std::vector<std::string> arms;
  for (const auto& u : units) arms.push_back(u.spec.at("arm").get<std::string>());
  return arms;
}

nlohmann::json terminal(const Unit& u, const std::string& kind) {
  return {{"kind", kind}, {"unit", u.id}, {"spec", u.spec}};
}

}  // namespace k3lab::experiments::plan_test
