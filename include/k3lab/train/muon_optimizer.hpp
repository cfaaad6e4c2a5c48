#pragma once
// Muon, Per-Head Muon and (for an instrumented AdamW run) AdamW as one torch::optim::Optimizer whose
// parameters each carry a role, built for a DecoderLM (parameter names blocks.<l>.*) through
// muon_optimizer_factory as a LoopConfig::optimizer_factory.
//
// Muon (Moonlight form, docs/per-head-muon.md):  M <- mu M + G;  U = G + mu M (Nesterov) or M;
//   O = NS5(U) (quintic Newton-Schulz, (a, b, c) = (3.4445, -4.7750, 2.0315), newton_schulz_steps
//   iterations, float32);  W <- W (1 - lr wd) - lr (update_rms sqrt(max(A, B))) O  for W in R^{A x B}.
// Per-Head Muon: the same momentum, but U is cut into the heads' blocks (query/key/value weights are
//   (H d_h) x D: row blocks of d_h rows; output is D x (H d_h): column blocks) and each block is
//   orthogonalized and scaled by update_rms sqrt(max(block rows, block cols)) alone, then re-joined.
// AdamW (embeddings, gains, biases under Muon; everything in the AdamW variant): decoupled weight
//   decay on matrices (dim >= 2) only, as train's built-in adamw.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "k3lab/train/optimizer.hpp"

namespace k3lab::train {

// Quintic Newton-Schulz: (m, n) -> (m, n) with singular values in about [0.68, 1.13] (the published
// coefficients trade convergence for slope at zero). Runs in float32 (the reference uses bfloat16 on
// GPUs; float32 keeps CPU runs bitwise repeatable).
torch::Tensor newton_schulz5(const torch::Tensor& update, int steps);

// Which block structure an orthogonalized update has.
enum class HeadSplit { None, Rows, Columns };

// The scaled orthogonalized update of one matrix (m, n) -> (m, n): whole (split None) or per head
// (`heads` equal row or column blocks), each block scaled to RMS about update_rms.
torch::Tensor orthogonalized_update(const torch::Tensor& update, int steps, double update_rms, HeadSplit split,
                                    std::int64_t heads);

enum class Role { Muon, AdamW };

struct MuonSettings {
  double momentum = 0.95;
  bool nesterov = true;
  int newton_schulz_steps = 5;
  double update_rms = 0.2;
  std::int64_t heads = 1;
};

// One trainable parameter and how it is updated.
struct ParameterPlan {
  std::string name;
  Role role = Role::AdamW;
  HeadSplit split = HeadSplit::None;
  bool decayed = false;        // AdamW: matrices only
  std::string projection;      // query | key | value | output | "" (per-head metrics)
  int layer = -1;
};

// Measurements the optimizer takes while it runs (not part of its math): the wall time of each step
// (the update alone) and, every `interval_steps` steps, the Frobenius norm of each head's block of
// the applied change W_after - W_before of the attention projections.
struct OptimizerProbe {
  std::int64_t interval_steps = 0;  // 0: no update norms
  std::vector<double> step_seconds;
  // The last measured step: {"step": s, "layers": [{"layer": l, "query": [norm per head], ...}]}.
  nlohmann::json last_update_norms;
};

class MuonOptimizer : public torch::optim::Optimizer {
 public:
  MuonOptimizer(std::vector<torch::Tensor> params, std::vector<ParameterPlan> plans, const OptimizerSpec& spec,
                MuonSettings settings, std::shared_ptr<OptimizerProbe> probe = nullptr);
  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  std::int64_t steps_taken() const { return steps_; }

 private:
  void update(std::size_t i, const torch::Tensor& p, double lr);
  std::vector<ParameterPlan> plans_;
  MuonSettings settings_;
  double weight_decay_, beta1_, beta2_, eps_;
  std::vector<torch::Tensor> first_, second_;  // Muon: momentum in first_; AdamW: moments
  std::int64_t steps_ = 0;
  std::shared_ptr<OptimizerProbe> probe_;
};

// Which parameters go to Muon: none (all AdamW, with the update-norm measurements), the hidden matrices
// whole, or the hidden matrices with the attention projections split by head.
enum class MuonVariant { AdamW, Muon, PerHeadMuon };

// Classifies a DecoderLM's parameters: AdamW (all AdamW), Muon (every hidden *_proj matrix under
// blocks.* is Muon, whole), PerHeadMuon (the projections named by per_head_projections split by head,
// the other hidden matrices whole). Weight decay follows `decay` (null: the shape rule dim >= 2).
std::vector<ParameterPlan> plan_parameters(MuonVariant variant, const std::vector<std::string>& names,
                                           const std::vector<torch::Tensor>& params,
                                           const std::vector<std::string>& per_head_projections,
                                           const DecayRule* decay = nullptr);

// Builds the variant over the model's trainable parameters. spec.extra: momentum, nesterov,
// newton_schulz_steps, update_rms, per_head_projections, heads (other keys throw). `probe` (may be
// null) receives the measurements of every optimizer the factory builds.
OptimizerFactory muon_optimizer_factory(MuonVariant variant, std::shared_ptr<OptimizerProbe> probe = nullptr);

}  // namespace k3lab::train
