#include "router_balance/run_unit.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "k3lab/train/data_order.hpp"
#include "k3lab/train/dataset.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/optimizer.hpp"
#include "router_balance/moe_model.hpp"
#include "router_balance/router_control.hpp"
#include "router_balance/routing_metrics.hpp"

namespace k3lab::experiments::router_balance {
namespace {

std::vector<double> to_doubles(const torch::Tensor& t) {
  const auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

std::filesystem::path routing_artifact(const std::filesystem::path& artifacts_dir, const std::string& unit_id) {
  if (artifacts_dir.empty()) return {};
  std::string name = unit_id;
  for (auto& ch : name) {
    if (ch == '/') ch = '_';
  }
  return artifacts_dir / "routing" / (name + ".jsonl");
}

}  // namespace

std::optional<std::string> runner_problem(const Parameters& p) {
  if (p.model.router_activation != "sigmoid") {
    return "router-balance: parameters.model.router_activation \"" + p.model.router_activation +
           "\" is not implemented; the runner implements \"sigmoid\" (K3's router)";
  }
  if (p.quantile_estimator != "exact") {
    return "router-balance: parameters.quantile_balancing.estimator \"" + p.quantile_estimator +
           "\" is not implemented; the runner implements \"exact\" (the histogram estimator is future work)";
  }
  if (p.batch_tokens % p.sequence_length != 0) {
    return "router-balance: batch_tokens must be a multiple of sequence_length (whole windows per update)";
  }
  if (p.final_loss_window_updates > p.measured_updates) {
    return "router-balance: final_loss_window_updates must not exceed measured_updates";
  }
  if (p.model.top_k >= p.model.n_experts) return "router-balance: model.top_k must be below model.n_experts";
  return std::nullopt;
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  if (auto problem = runner_problem(p)) throw std::invalid_argument(*problem);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  const auto control = control_of_arm(arm);
  const auto total = p.total_updates();
  const auto rows = p.batch_tokens / p.sequence_length;
  nlohmann::json data = {{"arm", arm},
                         {"seed", seed},
                         {"expert_capacity", p.expert_capacity()},
                         {"updates", total},
                         {"loop", "dedicated router-balance loop (run_unit.hpp), one forward per update"}};

  train::Dataset dataset;
  try {
    dataset = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(env.options)});
  } catch (const std::exception& e) {
    return UnitOutcome::failure(kDataUnavailable, e.what(), data);
  }
  data["dataset"] = dataset.provenance;

  const auto threads = env.options.value("threads", 0);
  if (threads > 0) torch::set_num_threads(threads);
  const auto device = train::resolve_device(env.options.value("device", std::string("auto")));
  data["device"] = device.str();
  MoeLm model(p, control, seed);  // the same seed in every arm: identical initial weights
  model->to(device);
  auto spec = train::OptimizerSpec::from_json(p.optimizer);
  spec.warmup_fraction = static_cast<double>(p.warmup_updates) / static_cast<double>(total);
  auto optimizer = train::make_optimizer(spec, *model);
  const train::WindowOrder order(dataset.train.size(), p.sequence_length, p.data_order_seed);

  const auto artifact = routing_artifact(env.artifacts_dir, unit.id);
  std::ofstream routing_log;
  if (!artifact.empty()) {
    std::filesystem::create_directories(artifact.parent_path());
    routing_log.open(artifact, std::ios::trunc);
  }

  std::vector<double> losses;
  nlohmann::json logged = nlohmann::json::array();
  OscillationTracker oscillation;
  double cv_sum = 0, max_mean_sum = 0, dropped_sum = 0;
  std::int64_t layer_records = 0;
  const auto start = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& failure_class, const std::string& detail) {
    data["primary_losses"] = losses;
    data["failed_at_update"] = static_cast<std::int64_t>(losses.size());
    return UnitOutcome::failure(failure_class, detail, data);
  };

  for (std::int64_t step = 0; step < total; ++step) {
    if (env.stop_requested && env.stop_requested->load()) {
      throw std::runtime_error("router-balance: " + unit.id + " interrupted at update " + std::to_string(step));
    }
    const bool measured = step >= p.warmup_updates;
    if (step == p.warmup_updates) oscillation.observe(model->biases());  // the bias entering the first measured update
    LmOutput out;
    torch::Tensor primary;
    try {
      const auto batch = train::training_batch(dataset.train, order, step * rows, rows, p.model.vocab_size);
      const auto inputs = torch::tensor(batch.inputs, torch::kInt64).view({rows, p.sequence_length}).to(device);
      const auto targets = torch::tensor(batch.targets, torch::kInt64).view({rows, p.sequence_length}).to(device);
      out = model->forward(inputs);
      primary = torch::nn::functional::cross_entropy(out.logits.reshape({-1, out.logits.size(-1)}).to(torch::kFloat32),
                                                     targets.reshape({-1}));
      const double value = primary.item<double>();
      if (!std::isfinite(value)) return fail("nan-loss", "non-finite primary loss at update " + std::to_string(step));
      auto loss = out.aux_loss.defined() ? primary + out.aux_loss : primary;
      optimizer->zero_grad();
      loss.backward();
      const double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      if (!std::isfinite(norm)) return fail("non-finite-gradient", "non-finite gradient norm at update " + std::to_string(step));
      train::set_learning_rate(*optimizer, train::scheduled_learning_rate(spec, step, total));
      optimizer->step();
      model->update_biases(out.routing, p.fixed_step);  // after the update: never route a batch with its own bias
      losses.push_back(value);
    } catch (const std::exception& e) {
      if (!train::is_out_of_memory(e)) throw;
      return fail("oom", e.what());
    }
    if (!measured) continue;
    const auto biases = model->biases();
    oscillation.observe(biases);
    if ((step - p.warmup_updates) % p.log_interval_updates != 0) continue;
    nlohmann::json layers = nlohmann::json::array();
    nlohmann::json raw_layers = nlohmann::json::array();
    double cv_step = 0, max_mean_step = 0, dropped_step = 0;
    for (std::size_t l = 0; l < out.routing.size(); ++l) {
      const auto& r = out.routing[l];
      const auto loads = to_doubles(r.loads);
      const double cv = load_cv(loads), mm = max_to_mean(loads), dr = dropped_rate(r.dropped, r.assignments);
      cv_step += cv;
      max_mean_step += mm;
      dropped_step += dr;
      layers.push_back({{"cv", cv}, {"max_to_mean", mm}, {"dropped_rate", dr}});
      raw_layers.push_back({{"loads", loads}, {"dropped", r.dropped}, {"bias_after_update", biases[l]}});
    }
    const double n_layers = static_cast<double>(out.routing.size());
    cv_sum += cv_step;
    max_mean_sum += max_mean_step;
    dropped_sum += dropped_step;
    layer_records += static_cast<std::int64_t>(out.routing.size());
    logged.push_back({{"update", step},
                      {"primary_loss", losses.back()},
                      {"expert_load_cv", cv_step / n_layers},
                      {"max_to_mean_load", max_mean_step / n_layers},
                      {"dropped_token_rate", dropped_step / n_layers},
                      {"layers", layers}});
    if (routing_log.is_open()) {
      routing_log << nlohmann::json{{"update", step}, {"primary_loss", losses.back()}, {"layers", raw_layers}}.dump() << '\n';
    }
    if (env.progress) env.progress(static_cast<double>(step + 1) / static_cast<double>(total));
  }

  const auto records = static_cast<double>(layer_records);
  data["primary_losses"] = losses;
  data["logged"] = logged;
  if (!artifact.empty()) data["routing_artifact"] = std::filesystem::relative(artifact, env.run_dir).string();
  nlohmann::json metrics = {
      {"expert_load_cv", cv_sum / records},
      {"max_to_mean_load", max_mean_sum / records},
      {"dropped_token_rate", dropped_sum / records},
      {"primary_training_loss", final_loss(losses, p.final_loss_window_updates)},
  };
  if (uses_bias(control)) {
    metrics["correction_bias_oscillation"] = {{"mean_abs_change", oscillation.mean_abs_change()},
                                              {"sign_flip_fraction", oscillation.sign_flip_fraction()},
                                              {"changes", oscillation.changes()},
                                              {"change_pairs", oscillation.change_pairs()}};
  } else {
    metrics["correction_bias_oscillation"] = nullptr;  // no correction bias in this arm
  }
  data["metrics"] = metrics;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return UnitOutcome::result(data, {{"training_seconds", seconds},
                                    {"tokens_per_second", static_cast<double>(total * p.batch_tokens) / seconds}});
}

}  // namespace k3lab::experiments::router_balance
