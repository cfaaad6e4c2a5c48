#pragma once
// Optimizers by name, so that experiments share one trainer and swap the update rule (AdamW here;
// Muon and Per-Head Muon register themselves for experiment seven), and the learning-rate schedule
// every arm of an experiment shares.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace k3lab::train {

struct OptimizerSpec {
  std::string name = "adamw";
  double learning_rate = 6e-4;     // peak
  double weight_decay = 0.1;       // decoupled; applied to matrices (dim >= 2), never to gains or biases
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double warmup_fraction = 0.01;   // of the optimizer steps
  std::string decay = "cosine";    // cosine | linear | constant
  double min_lr_ratio = 0.1;       // the schedule's floor as a fraction of the peak (cosine, linear)
  nlohmann::json extra = nlohmann::json::object();  // keys only a registered optimizer understands

  // Known keys fill the fields; unknown keys go to `extra` for the named optimizer to check.
  static OptimizerSpec from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

using OptimizerBuilder =
    std::function<std::unique_ptr<torch::optim::Optimizer>(const OptimizerSpec& spec, torch::nn::Module& model)>;

// Adds or replaces a builder ("adamw" is registered by default).
void register_optimizer(const std::string& name, OptimizerBuilder builder);

// Throws std::invalid_argument for an unknown name, listing the registered ones.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, torch::nn::Module& model);

// Linear warmup over round(warmup_fraction * total_steps) steps to the peak, then the decay down to
// min_lr_ratio * peak at the last step. step is 0-based.
double scheduled_learning_rate(const OptimizerSpec& spec, std::int64_t step, std::int64_t total_steps);

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace k3lab::train
