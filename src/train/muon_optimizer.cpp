#include "k3lab/train/muon_optimizer.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <torch/cuda.h>
#include <torch/optim/adamw.h>
#include <torch/serialize/archive.h>

namespace k3lab::train {
namespace {

using Clock = std::chrono::steady_clock;

// Published quintic coefficients (KellerJordan/Muon); chosen to maximise the slope at zero.
constexpr double kA = 3.4445, kB = -4.7750, kC = 2.0315;

torch::Tensor scaled_block(const torch::Tensor& block, int steps, double update_rms) {
  const double scale = update_rms * std::sqrt(static_cast<double>(std::max(block.size(0), block.size(1))));
  return newton_schulz5(block, steps) * scale;
}

const std::vector<std::pair<std::string, std::string>>& projection_names() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"q_proj", "query"}, {"k_proj", "key"}, {"v_proj", "value"}, {"o_proj", "output"}};
  return names;
}

}  // namespace

torch::Tensor newton_schulz5(const torch::Tensor& update, int steps) {
  if (update.dim() != 2) throw std::invalid_argument("newton_schulz5: expected a matrix, got " + std::to_string(update.dim()) + " dims");
  auto x = update.to(torch::kFloat32);
  const bool tall = x.size(0) > x.size(1);
  if (tall) x = x.t();                   // (r, c) with r <= c: X X^T is the small Gram matrix
  x = x / (x.norm() + 1e-7);             // spectral norm <= Frobenius norm <= 1
  for (int i = 0; i < steps; ++i) {
    const auto a = torch::mm(x, x.t());  // (r, r)
    const auto b = kB * a + kC * torch::mm(a, a);
    x = kA * x + torch::mm(b, x);        // (r, c)
  }
  return (tall ? x.t() : x).contiguous().to(update.scalar_type());
}

torch::Tensor orthogonalized_update(const torch::Tensor& update, int steps, double update_rms, HeadSplit split,
                                    std::int64_t heads) {
  if (split == HeadSplit::None || heads <= 1) return scaled_block(update, steps, update_rms);
  const int dim = split == HeadSplit::Rows ? 0 : 1;
  if (update.size(dim) % heads != 0) {
    throw std::invalid_argument("per-head Muon: dimension " + std::to_string(update.size(dim)) + " is not divisible by " +
                                std::to_string(heads) + " heads");
  }
  std::vector<torch::Tensor> blocks;
  for (const auto& block : update.chunk(heads, dim)) blocks.push_back(scaled_block(block, steps, update_rms));
  return torch::cat(blocks, dim);
}

MuonOptimizer::MuonOptimizer(std::vector<torch::Tensor> params, std::vector<ParameterPlan> plans,
                             const OptimizerSpec& spec, MuonSettings settings, std::shared_ptr<OptimizerProbe> probe)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(params)},
                              std::make_unique<torch::optim::AdamWOptions>(spec.learning_rate)),
      plans_(std::move(plans)),
      settings_(settings),
      weight_decay_(spec.weight_decay),
      beta1_(spec.beta1),
      beta2_(spec.beta2),
      eps_(spec.eps),
      probe_(std::move(probe)) {
  if (plans_.size() != params.size()) throw std::invalid_argument("MuonOptimizer: one plan per parameter expected");
  for (const auto& p : params) {
    first_.push_back(torch::zeros_like(p));
    second_.push_back(torch::zeros_like(p));
  }
}

void MuonOptimizer::update(std::size_t i, const torch::Tensor& p, double lr) {
  const auto& plan = plans_[i];
  const auto g = p.grad();
  if (plan.role == Role::Muon) {
    auto& m = first_[i];
    m.mul_(settings_.momentum).add_(g);                                     // M <- mu M + G
    const auto u = settings_.nesterov ? g + settings_.momentum * m : m;     // Nesterov: G + mu M
    const auto o = orthogonalized_update(u, settings_.newton_schulz_steps, settings_.update_rms, plan.split, settings_.heads);
    p.mul_(1.0 - lr * weight_decay_).add_(o, -lr);
    return;
  }
  auto& m = first_[i];
  auto& v = second_[i];
  m.mul_(beta1_).add_(g, 1.0 - beta1_);
  v.mul_(beta2_).addcmul_(g, g, 1.0 - beta2_);
  const double t = static_cast<double>(steps_ + 1);
  const double bc1 = 1.0 - std::pow(beta1_, t), bc2 = 1.0 - std::pow(beta2_, t);
  if (plan.decayed) p.mul_(1.0 - lr * weight_decay_);
  const auto denom = (v.sqrt() / std::sqrt(bc2)).add_(eps_);
  p.addcdiv_(m, denom, -lr / bc1);
}

torch::Tensor MuonOptimizer::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode grad(true);
    loss = closure();
  }
  auto& group = param_groups_.front();
  const double lr = group.options().get_lr();
  const auto& params = group.params();
  const bool measure = probe_ && probe_->interval_steps > 0 && (steps_ + 1) % probe_->interval_steps == 0;
  std::vector<torch::Tensor> before(params.size());
  if (measure) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!plans_[i].projection.empty()) before[i] = params[i].detach().clone();
    }
  }
  const bool cuda = !params.empty() && params.front().is_cuda();
  if (cuda) torch::cuda::synchronize();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].grad().defined()) update(i, params[i], lr);
  }
  if (cuda) torch::cuda::synchronize();
  if (probe_) probe_->step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  steps_ += 1;
  if (measure) {
    std::map<int, nlohmann::json> layers;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto& plan = plans_[i];
      if (plan.projection.empty()) continue;
      const auto delta = (params[i].detach() - before[i]).to(torch::kFloat64);
      const int dim = plan.projection == "output" ? 1 : 0;  // heads are row blocks of q/k/v, column blocks of o
      nlohmann::json norms = nlohmann::json::array();
      for (const auto& block : delta.chunk(settings_.heads, dim)) norms.push_back(block.norm().item<double>());
      layers[plan.layer]["layer"] = plan.layer;
      layers[plan.layer][plan.projection] = norms;
    }
    nlohmann::json list = nlohmann::json::array();
    for (auto& [layer, entry] : layers) list.push_back(entry);
    probe_->last_update_norms = {{"step", steps_}, {"layers", list}};
  }
  return loss;
}

void MuonOptimizer::save(torch::serialize::OutputArchive& archive) const {
  archive.write("steps", torch::tensor(steps_, torch::kInt64));
  for (std::size_t i = 0; i < first_.size(); ++i) {
    archive.write("first/" + std::to_string(i), first_[i], true);
    archive.write("second/" + std::to_string(i), second_[i], true);
  }
}

void MuonOptimizer::load(torch::serialize::InputArchive& archive) {
  torch::Tensor steps;
  archive.read("steps", steps);
  steps_ = steps.item<std::int64_t>();
  for (std::size_t i = 0; i < first_.size(); ++i) {
    archive.read("first/" + std::to_string(i), first_[i], true);
    archive.read("second/" + std::to_string(i), second_[i], true);
  }
}

std::vector<ParameterPlan> plan_parameters(MuonVariant variant, const std::vector<std::string>& names,
                                           const std::vector<torch::Tensor>& params,
                                           const std::vector<std::string>& per_head_projections,
                                           const DecayRule* decay) {
  std::vector<ParameterPlan> plans;
  for (std::size_t i = 0; i < names.size(); ++i) {
    ParameterPlan plan;
    plan.name = names[i];
    plan.decayed = decay ? decay->decays(params[i]) : params[i].dim() >= 2;
    // Hidden matrices: the attention and FFN projections of the blocks (not embeddings, norms, gains).
    const bool hidden = names[i].rfind("blocks.", 0) == 0 && params[i].dim() == 2 && names[i].ends_with("_proj.weight");
    if (names[i].rfind("blocks.", 0) == 0) plan.layer = std::stoi(names[i].substr(7));
    for (const auto& [module, projection] : projection_names()) {
      if (names[i].ends_with("attention." + module + ".weight")) plan.projection = projection;
    }
    if (variant != MuonVariant::AdamW && hidden) {
      plan.role = Role::Muon;
      bool split = false;
      for (const auto& name : per_head_projections) split = split || name == plan.projection;
      if (variant == MuonVariant::PerHeadMuon && split && !plan.projection.empty()) {
        plan.split = plan.projection == "output" ? HeadSplit::Columns : HeadSplit::Rows;
      }
    }
    // Update norms are measured for q, k and v (per-head-muon's dispersion metric) in every variant.
    if (plan.projection == "output") plan.projection.clear();
    plans.push_back(plan);
  }
  return plans;
}

OptimizerFactory muon_optimizer_factory(MuonVariant variant, std::shared_ptr<OptimizerProbe> probe) {
  return [variant, probe](const OptimizerSpec& spec, torch::nn::Module& model) -> std::unique_ptr<torch::optim::Optimizer> {
    static const std::set<std::string> known = {"momentum", "nesterov", "newton_schulz_steps", "update_rms",
                                                "per_head_projections", "heads"};
    for (auto it = spec.extra.begin(); it != spec.extra.end(); ++it) {
      if (!known.count(it.key())) {
        throw std::invalid_argument("optimizer " + spec.name + ": unknown key \"" + it.key() +
                                    "\" (known: momentum, nesterov, newton_schulz_steps, update_rms, per_head_projections, heads)");
      }
    }
    MuonSettings s;
    s.momentum = spec.extra.value("momentum", s.momentum);
    s.nesterov = spec.extra.value("nesterov", s.nesterov);
    s.newton_schulz_steps = spec.extra.value("newton_schulz_steps", s.newton_schulz_steps);
    s.update_rms = spec.extra.value("update_rms", s.update_rms);
    s.heads = spec.extra.value("heads", s.heads);
    const auto projections = spec.extra.value("per_head_projections", std::vector<std::string>{"query", "key", "value"});
    std::vector<std::string> names;
    std::vector<torch::Tensor> params;
    for (const auto& item : model.named_parameters()) {
      if (!item.value().requires_grad()) continue;
      names.push_back(item.key());
      params.push_back(item.value());
    }
    const DecayRule decay(model);
    auto plans = plan_parameters(variant, names, params, projections, &decay);
    return std::make_unique<MuonOptimizer>(params, std::move(plans), spec, s, probe);
  };
}

}  // namespace k3lab::train
