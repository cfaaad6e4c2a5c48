#pragma once
// The optimizer of a training run: its specification, the built-in AdamW, the factory type through
// which a run supplies any other update rule (muon_optimizer.hpp builds Muon and Per-Head Muon), and
// the learning-rate schedule every arm of an experiment shares.
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace k3lab::train {

struct OptimizerSpec {
  std::string name = "adamw";
  double learning_rate = 6e-4;     // peak
  double weight_decay = 0.1;       // decoupled; weight matrices only, never gains, biases or
                                   // vector stacks (models/undecayed_matrices.hpp)
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double warmup_fraction = 0.01;   // of the optimizer steps
  std::string decay = "cosine";    // cosine | linear | constant
  double min_lr_ratio = 0.1;       // the schedule's floor as a fraction of the peak (cosine, linear)
  nlohmann::json extra = nlohmann::json::object();  // keys only the run's OptimizerFactory understands

  // Known keys fill the fields; unknown keys go to `extra` for the factory to check.
  static OptimizerSpec from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

// Builds the optimizer over `model`'s trainable parameters (the schedule sets its learning rate each
// step). Throws std::invalid_argument for keys in spec.extra it does not know.
using OptimizerFactory =
    std::function<std::unique_ptr<torch::optim::Optimizer>(const OptimizerSpec& spec, torch::nn::Module& model)>;

// Which trainable parameters weight decay applies to: weight matrices, i.e. dim >= 2 and not declared
// vectors in role by their module (models/undecayed_matrices.hpp: AttnRes's pseudo-queries and key
// gains). Every optimizer asks this one rule.
class DecayRule {
 public:
  explicit DecayRule(torch::nn::Module& model);
  bool decays(const torch::Tensor& parameter) const;

 private:
  std::set<const c10::TensorImpl*> exempt_;
};

// AdamW with decoupled weight decay on weight matrices only (dim >= 2 and not declared undecayed by
// its module, models/undecayed_matrices.hpp); spec.extra must be empty.
std::unique_ptr<torch::optim::Optimizer> make_adamw(const OptimizerSpec& spec, torch::nn::Module& model);

// `factory` when one is given; otherwise the built-in AdamW for spec.name "adamw", and for any other
// name an std::invalid_argument that says to pass the factory that builds it.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, torch::nn::Module& model,
                                                        const OptimizerFactory& factory = {});

// Linear warmup over round(warmup_fraction * total_steps) steps to the peak, then the decay down to
// min_lr_ratio * peak at the last step. step is 0-based.
double scheduled_learning_rate(const OptimizerSpec& spec, std::int64_t step, std::int64_t total_steps);

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace k3lab::train
