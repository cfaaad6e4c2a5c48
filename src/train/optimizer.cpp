#include "k3lab/train/optimizer.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include <torch/optim/adamw.h>

#include "k3lab/models/undecayed_matrices.hpp"

namespace k3lab::train {
namespace {

double number(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_number()) throw std::invalid_argument(std::string("optimizer.") + key + ": expected a number");
  return j.at(key).get<double>();
}

}  // namespace

DecayRule::DecayRule(torch::nn::Module& model) {
  auto collect = [this](const torch::nn::Module& module) {
    if (const auto* marked = dynamic_cast<const models::UndecayedMatrices*>(&module)) {
      for (const auto& t : marked->undecayed_matrices()) exempt_.insert(t.unsafeGetTensorImpl());
    }
  };
  // The model itself is looked at directly: modules(include_self) needs it to live in a shared_ptr,
  // which a task's model need not.
  collect(model);
  for (const auto& child : model.modules(/*include_self=*/false)) collect(*child);
}

bool DecayRule::decays(const torch::Tensor& parameter) const {
  return parameter.dim() >= 2 && !exempt_.count(parameter.unsafeGetTensorImpl());
}

OptimizerSpec OptimizerSpec::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("optimizer: expected an object");
  OptimizerSpec s;
  if (j.contains("name")) s.name = j.at("name").get<std::string>();
  s.learning_rate = number(j, "learning_rate", s.learning_rate);
  s.weight_decay = number(j, "weight_decay", s.weight_decay);
  s.beta1 = number(j, "beta1", s.beta1);
  s.beta2 = number(j, "beta2", s.beta2);
  s.eps = number(j, "eps", s.eps);
  s.warmup_fraction = number(j, "warmup_fraction", s.warmup_fraction);
  s.min_lr_ratio = number(j, "min_lr_ratio", s.min_lr_ratio);
  if (j.contains("decay")) s.decay = j.at("decay").get<std::string>();
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const std::set<std::string> known = {"name", "learning_rate", "weight_decay", "beta1", "beta2", "eps",
                                                "warmup_fraction", "decay", "min_lr_ratio"};
    if (!known.count(it.key())) s.extra[it.key()] = it.value();
  }
  if (!(s.learning_rate > 0)) throw std::invalid_argument("optimizer.learning_rate must be positive");
  if (s.warmup_fraction < 0 || s.warmup_fraction > 1) throw std::invalid_argument("optimizer.warmup_fraction must be in [0, 1]");
  if (s.min_lr_ratio < 0 || s.min_lr_ratio > 1) throw std::invalid_argument("optimizer.min_lr_ratio must be in [0, 1]");
  if (s.decay != "cosine" && s.decay != "linear" && s.decay != "constant") {
    throw std::invalid_argument("optimizer.decay must be cosine, linear or constant (got \"" + s.decay + "\")");
  }
  return s;
}

nlohmann::json OptimizerSpec::to_json() const {
  nlohmann::json j = {{"name", name},   {"learning_rate", learning_rate},     {"weight_decay", weight_decay},
                      {"beta1", beta1}, {"beta2", beta2},                     {"eps", eps},
                      {"decay", decay}, {"warmup_fraction", warmup_fraction}, {"min_lr_ratio", min_lr_ratio}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}


std::unique_ptr<torch::optim::Optimizer> make_adamw(const OptimizerSpec& spec, torch::nn::Module& model) {
  if (!spec.extra.empty()) {
    throw std::invalid_argument("optimizer adamw: unknown keys " + spec.extra.dump() +
                                " (known: learning_rate, weight_decay, beta1, beta2, eps, warmup_fraction, decay, "
                                "min_lr_ratio)");
  }
  std::vector<torch::Tensor> decayed, plain;
  const DecayRule rule(model);
  for (const auto& p : model.parameters()) {
    if (!p.requires_grad()) continue;
    (rule.decays(p) ? decayed : plain).push_back(p);
  }
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(spec.learning_rate)
                                                            .betas({spec.beta1, spec.beta2})
                                                            .eps(spec.eps)
                                                            .weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (!decayed.empty()) groups.emplace_back(decayed, options(spec.weight_decay));
  if (!plain.empty()) groups.emplace_back(plain, options(0.0));
  if (groups.empty()) throw std::invalid_argument("optimizer adamw: the model has no trainable parameters");
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(spec.learning_rate));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, torch::nn::Module& model,
                                                        const OptimizerFactory& factory) {
  if (factory) return factory(spec, model);
  if (spec.name != "adamw") {
    throw std::invalid_argument("optimizer \"" + spec.name + "\" is not built in (built in: adamw): pass the factory "
                                "that builds it in the trainer configuration (optimizer_factory; "
                                "train/muon_optimizer.hpp builds muon and per-head-muon)");
  }
  return make_adamw(spec, model);
}

double scheduled_learning_rate(const OptimizerSpec& spec, std::int64_t step, std::int64_t total_steps) {
  if (total_steps <= 0 || step < 0 || step >= total_steps) {
    throw std::invalid_argument("learning-rate schedule: step " + std::to_string(step) + " outside [0, " +
                                std::to_string(total_steps) + ")");
  }
  const auto warmup = static_cast<std::int64_t>(std::llround(spec.warmup_fraction * static_cast<double>(total_steps)));
  if (step < warmup) return spec.learning_rate * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (spec.decay == "constant") return spec.learning_rate;
  const std::int64_t span = total_steps - warmup;
  const double t = span <= 1 ? 1.0 : static_cast<double>(step - warmup) / static_cast<double>(span - 1);
  const double floor = spec.min_lr_ratio;
  const double shape = spec.decay == "cosine" ? 0.5 * (1.0 + std::cos(M_PI * t)) : 1.0 - t;
  return spec.learning_rate * (floor + (1.0 - floor) * shape);
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace k3lab::train
