#include "router_balance/moe_model.hpp"

#include <torch/torch.h>

namespace k3lab::experiments::router_balance {
namespace {

std::vector<std::vector<double>> as_rows(const torch::Tensor& biases) {
  const auto c = biases.to(torch::kFloat64).contiguous();  // (layers, experts)
  std::vector<std::vector<double>> rows;
  for (std::int64_t l = 0; l < c.size(0); ++l) rows.emplace_back(c[l].data_ptr<double>(), c[l].data_ptr<double>() + c.size(1));
  return rows;
}

const char* control_name(models::RouterControl control) {
  switch (control) {
    case models::RouterControl::None: return "none";
    case models::RouterControl::AuxLoss: return "aux-loss";
    case models::RouterControl::FixedStepBias: return "fixed-step-bias";
    case models::RouterControl::QuantileBalancing: return "quantile-balancing";
  }
  return "none";
}

}  // namespace

models::MoeLmOptions moe_lm_options(const Parameters& p, models::RouterControl control) {
  models::MoeLmOptions o;
  o.vocab_size = p.model.vocab_size;
  o.n_layers = p.model.n_layers;
  o.attention = {p.model.d_model, p.model.n_heads, p.model.head_dim, 10000.0};
  o.moe.hidden_size = p.model.d_model;
  o.moe.n_experts = p.model.n_experts;
  o.moe.top_k = p.model.top_k;
  o.moe.expert_hidden = p.model.expert_hidden;
  o.moe.capacity = p.expert_capacity();
  o.moe.control = control;
  o.moe.aux_coefficient = p.aux_loss_coefficient;
  return o;
}

MoeProxyTask::MoeProxyTask(const Parameters& p, models::RouterControl control, std::uint64_t init_seed,
                           std::filesystem::path routing_log)
    : options_(moe_lm_options(p, control)),
      init_seed_(init_seed),
      warmup_updates_(p.warmup_updates),
      log_interval_updates_(p.log_interval_updates),
      fixed_step_(p.fixed_step),
      model_(options_, init_seed),
      log_(std::move(routing_log)) {
  if (warmup_updates_ == 0) observe_biases();  // the bias entering the first measured update
}

nlohmann::json MoeProxyTask::identity() const {
  const auto& a = options_.attention;
  const auto& m = options_.moe;
  return {{"model",
           {{"vocab_size", options_.vocab_size}, {"n_layers", options_.n_layers}, {"d_model", a.hidden_size},
            {"n_heads", a.num_heads}, {"head_dim", a.head_dim}, {"rope_theta", a.rope_theta},
            {"n_experts", m.n_experts}, {"top_k", m.top_k}, {"expert_hidden", m.expert_hidden},
            {"capacity", m.capacity}}},
          {"control", {{"kind", control_name(m.control)}, {"aux_coefficient", m.aux_coefficient}, {"fixed_step", fixed_step_}}},
          {"init_seed", init_seed_},
          {"measurement", {{"warmup_updates", warmup_updates_}, {"log_interval_updates", log_interval_updates_}}}};
}

train::TaskLoss MoeProxyTask::loss(const train::Batch& batch) {
  auto out = model_->forward(batch.inputs);  // logits (B, T, V)
  routing_ = std::move(out.routing);
  train::TaskLoss result{train::next_token_loss(out.logits, batch.targets), out.aux_loss, nullptr};
  if (logged(batch.step)) {
    measured_ = measure_blocks(routing_);
    result.extras = logged_measurements(measured_);
  }
  return result;
}

nlohmann::json MoeProxyTask::after_step(const train::StepReport& report) {
  model_->update_biases(routing_, fixed_step_);
  // The bias entering the first measured update, then the bias after every measured update.
  if (report.step + 1 >= warmup_updates_) observe_biases();
  if (logged(report.step)) log_.write(report.step, report.loss, measured_, model_->biases());
  return report.extras;
}

void MoeProxyTask::save_state(torch::serialize::OutputArchive& archive) const {
  const auto layers = static_cast<std::int64_t>(options_.n_layers);
  const auto experts = static_cast<std::int64_t>(options_.moe.n_experts);
  const auto history = observed_biases_.empty() ? torch::zeros({0, layers, experts}) : torch::stack(observed_biases_);
  archive.write("observed_biases", history);  // (observations, layers, experts) float32
}

void MoeProxyTask::restore_state(torch::serialize::InputArchive& archive) {
  torch::Tensor history;
  archive.read("observed_biases", history);
  history = history.to(torch::kCPU);
  oscillation_ = OscillationTracker();
  observed_biases_.clear();
  for (std::int64_t i = 0; i < history.size(0); ++i) {
    observed_biases_.push_back(history[i].clone());
    oscillation_.observe(as_rows(observed_biases_.back()));
  }
}

void MoeProxyTask::begin(std::int64_t step) { log_.open_at(step); }

bool MoeProxyTask::logged(std::int64_t step) const {
  return step >= warmup_updates_ && (step - warmup_updates_) % log_interval_updates_ == 0;
}

void MoeProxyTask::observe_biases() {
  std::vector<torch::Tensor> layers;
  for (const auto& module : *model_->layers) layers.push_back(module->as<models::MoeLayerImpl>()->moe->correction_bias.detach());
  observed_biases_.push_back(torch::stack(layers).to(torch::kCPU, torch::kFloat32));  // (layers, experts)
  oscillation_.observe(as_rows(observed_biases_.back()));
}

}  // namespace k3lab::experiments::router_balance
