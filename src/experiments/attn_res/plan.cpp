#include "attn_res/plan.hpp"

#include <map>

namespace k3lab::experiments::attn_res {
namespace {

// The estimate's basis: bf16 8192^3 matmul measured at about 795 TFLOP/s on the H200 (DESIGN.md
// section 8), of which a small model's training step is assumed to reach 40%.
constexpr double kMeasuredMatmulFlops = 795e12;
constexpr double kAssumedUtilisation = 0.40;

}  // namespace

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> by_arm, by_seed;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_seed[std::to_string(u.spec.at("seed").get<std::uint64_t>())];
  }
  const int complete_blocks = p.model.n_layers / p.attnres_block_layers;
  const int partial_layers = p.model.n_layers % p.attnres_block_layers;
  const int blocks = complete_blocks + (partial_layers > 0 ? 1 : 0);
  const double runs = static_cast<double>(units.size());
  const double parameters = p.approximate_parameters();
  const double flops_per_run = 6.0 * parameters * static_cast<double>(p.token_budget);
  const double gpu_hours_per_run = flops_per_run / (kMeasuredMatmulFlops * kAssumedUtilisation) / 3600.0;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
  d["depth"] = {{"decoder_layers", p.model.n_layers},
                {"block_layers", p.attnres_block_layers},
                {"complete_blocks", complete_blocks},
                {"partial_block_layers", partial_layers},
                // Sources one aggregation can attend to (AttnRes counts attention and MLP as separate layers):
                // Full: the embedding and every sublayer output; Block: the embedding and every block.
                {"most_depth_sources_full_attnres", 2 * p.model.n_layers + 1},
                {"most_depth_sources_block_attnres", blocks + 1}};
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"checkpoints", p.token_budget / p.eval_interval_tokens}};
  d["decision"] = {{"primary", "paired per-seed validation loss at the token budget"},
                   {"min_relative_improvement", p.decision.min_relative_improvement},
                   {"confidence", p.decision.confidence},
                   {"bootstrap_resamples", p.decision.bootstrap_resamples},
                   {"max_memory_regression", p.decision.max_memory_regression},
                   {"max_throughput_regression", p.decision.max_throughput_regression}};
  d["training_tokens_total"] = runs * static_cast<double>(p.token_budget);
  d["estimate"] = {{"approximate_parameters", parameters},
                   {"flops_per_run", flops_per_run},
                   {"gpu_hours_per_run", gpu_hours_per_run},
                   {"gpu_hours_total", gpu_hours_per_run * runs},
                   {"basis", "6 x parameters x tokens for the ordinary-residual shape (tied embedding) at 40% of the "
                             "795 TFLOP/s bf16 matmul rate measured on one H200; attention scores, AttnRes "
                             "aggregation and evaluation are not counted, so this is a lower bound on time"}};
  return d;
}

}  // namespace k3lab::experiments::attn_res
