#include "k3lab/experiments/training/plan_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "k3lab/train/builtin_suite.hpp"

namespace k3lab::experiments::training {

GpuHours gpu_hours(double parameters, double tokens) {
  GpuHours g;
  g.flops = 6.0 * parameters * tokens;
  g.gpu_hours = g.flops / (kH200Bf16Matmul.flops_per_second * kAssumedUtilisation) / 3600.0;
  return g;
}

std::string estimate_basis(const std::string& counted, const std::string& not_counted) {
  const auto percent = std::llround(100 * kAssumedUtilisation);
  const auto tflops = std::llround(kH200Bf16Matmul.flops_per_second / 1e12);
  return counted + " at " + std::to_string(percent) + "% of the " + std::to_string(tflops) + " TFLOP/s " +
         kH200Bf16Matmul.operation + " rate measured on one " + kH200Bf16Matmul.device + "; " + not_counted;
}

nlohmann::json per_run_estimate(const RunCost& cost, std::size_t runs) {
  const auto per_run = gpu_hours(cost.parameters, cost.tokens_per_run);
  nlohmann::json estimate = {{"flops_per_run", per_run.flops},
                             {"gpu_hours_per_run", per_run.gpu_hours},
                             {"gpu_hours_total", per_run.gpu_hours * static_cast<double>(runs)},
                             {"basis", estimate_basis(cost.counted, cost.not_counted)}};
  if (!cost.parameters_key.empty()) estimate[cost.parameters_key] = cost.parameters;
  return estimate;
}

void add_run_estimate(nlohmann::json& details, const RunCost& cost, std::size_t runs) {
  details["training_tokens_total"] = static_cast<double>(runs) * cost.tokens_per_run;
  details["estimate"] = per_run_estimate(cost, runs);
}

nlohmann::json arm_costs_json(const std::vector<ArmCost>& arms) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& a : arms) {
    const auto floor = gpu_hours(a.parameters, a.tokens_per_run);
    nlohmann::json row = {{"arm", a.arm},
                          {"runs", a.runs},
                          {"tokens_per_run", a.tokens_per_run},
                          {"floor_gpu_hours_per_run", floor.gpu_hours},
                          {"shape", a.bench.shape ? a.bench.shape->to_json() : nlohmann::json(nullptr)}};
    if (!a.bench.shape) row["unmeasured_reason"] = a.bench.reason;
    if (a.memory) row["memory"] = memory_plan_json(*a.memory);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json memory_plan_json(const models::TrainingMemory& memory) {
  auto j = memory.to_json();
  j["device"] = kH200Bf16Matmul.device;
  j["device_memory_bytes"] = train::kH200MemoryBytes;
  j["fits"] = static_cast<double>(memory.total()) <= kMemoryHeadroom * train::kH200MemoryBytes;
  return j;
}

std::optional<models::TrainingMemory> trainer_memory(const std::function<train::TrainerConfig()>& make) {
  try {
    const auto config = make();
    return models::decoder_training_memory(config.model, config.resolved_micro_batch_rows(), config.sequence_length);
  } catch (const std::exception&) {
    return std::nullopt;  // the bench shape's reason says why
  }
}

namespace {

// An arm's step peak with `lanes` micro-batches side by side, from its memory plan's JSON.
std::int64_t step_bytes_with_lanes(const nlohmann::json& m, int lanes) {
  const auto total = m.at("total_bytes").get<std::int64_t>();
  if (lanes < 2) return total;
  const auto transient = m.at("transients").value(m.at("largest_transient").get<std::string>(), std::int64_t{0});
  const auto per_lane = m.at("activation_bytes").get<std::int64_t>() + transient;
  return total + (lanes - 1) * per_lane + lanes * m.at("gradients_bytes").get<std::int64_t>();
}

}  // namespace

std::optional<std::string> memory_refusal(const nlohmann::json& plan_details, double device_bytes,
                                          const std::string& device_name,
                                          const std::function<int(std::int64_t micro_batch_rows)>& lanes) {
  if (!plan_details.is_object() || !plan_details.contains("gpu_hours_by_arm")) return std::nullopt;
  for (const auto& arm : plan_details.at("gpu_hours_by_arm")) {
    if (!arm.contains("memory")) continue;
    const auto& m = arm.at("memory");
    const auto rows = m.at("micro_batch_rows").get<std::int64_t>();
    const int side_by_side = lanes(rows);
    const auto total = step_bytes_with_lanes(m, side_by_side);
    if (static_cast<double>(total) <= kMemoryHeadroom * device_bytes) continue;
    std::string step = std::to_string(rows) + (rows == 1 ? " row x " : " rows x ") +
                       std::to_string(m.at("sequence_length").get<std::int64_t>()) + " tokens";
    if (side_by_side > 1) step += " (" + std::to_string(side_by_side) + " micro-batches side by side, one per thread)";
    const std::string share = std::to_string(std::llround(100 * kMemoryHeadroom)) + "%";
    return "arm " + arm.at("arm").get<std::string>() + " needs an estimated " + models::gigabytes(total) +
           " for one training step of " + step + ", more than " + share + " of the " +
           models::gigabytes(static_cast<std::int64_t>(device_bytes)) + " " + device_name +
           " has (`k3lab plan` prints every arm's parts): run it on a device with more memory" +
           (side_by_side > 1 ? std::string(" or with fewer --threads") : std::string()) +
           "; the micro-batch follows from the protocol and is the same for every arm, so it is not shrunk for one";
  }
  return std::nullopt;
}

namespace {

std::string share_percent(double share) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << 100.0 * share << "%";
  return text.str();
}

// "long-context probes (long_context_eval.lengths, ...: 40.6%), validation loss (...: 5.3%)": the
// parts of at least 1% of training, largest first.
std::string evaluation_drivers(std::vector<EvaluationPart> parts, double training_flops, double parameters) {
  const auto flops = [&](const EvaluationPart& p) { return p.flops_per_token_per_parameter * parameters * p.tokens; };
  std::sort(parts.begin(), parts.end(), [&](const auto& a, const auto& b) { return flops(a) > flops(b); });
  std::string text;
  for (const auto& part : parts) {
    if (flops(part) < 0.01 * training_flops) continue;
    std::string fields;
    for (const auto& f : part.fields) fields += (fields.empty() ? "" : ", ") + f;
    text += (text.empty() ? "" : "; ") + part.what + " (" + fields + ": " +
            share_percent(flops(part) / training_flops) + ")";
  }
  return text;
}

}  // namespace

nlohmann::json evaluation_cost_json(const EvaluationCost& cost) {
  const double runs = static_cast<double>(std::max<std::size_t>(1, cost.runs));
  const double training_flops = 6.0 * cost.parameters * cost.training_tokens;
  double tokens = 0, flops = 0;
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& part : cost.parts) {
    const double part_flops = part.flops_per_token_per_parameter * cost.parameters * part.tokens;
    tokens += part.tokens;
    flops += part_flops;
    parts.push_back({{"what", part.what},
                     {"fields", part.fields},
                     {"tokens_per_run", part.tokens / runs},
                     {"flops_per_run", part_flops / runs},
                     {"share_of_training", training_flops > 0 ? part_flops / training_flops : 0.0}});
  }
  const double share = training_flops > 0 ? flops / training_flops : 0.0;
  const double hours_total = flops / (kH200Bf16Matmul.flops_per_second * kAssumedUtilisation) / 3600.0;
  nlohmann::json j = {{"forward_tokens_per_run", tokens / runs},
                      {"flops_per_run", flops / runs},
                      {"gpu_hours_per_run", hours_total / runs},
                      {"gpu_hours_total", hours_total},
                      {"share_of_training", share},
                      {"parts", parts},
                      {"basis",
                       "2 x parameters FLOPs per evaluated token (6 with a backward) against 6 x parameters "
                       "per training token; hours at the training floor's rate; attention scores over long "
                       "probes are not counted"}};
  if (share > kEvaluationShareWarning) {
    j["warning"] = "evaluation is " + share_percent(share) + " of training time (above " +
                   share_percent(kEvaluationShareWarning) +
                   "): " + evaluation_drivers(cost.parts, training_flops, cost.parameters);
  }
  return j;
}

std::vector<ArmCost> arm_costs(const std::vector<std::string>& arms, const std::vector<Unit>& units,
                               double tokens_per_run, double parameters,
                               const std::function<train::BenchShape(const std::string&)>& shape_of) {
  std::vector<ArmCost> costs;
  for (const auto& arm : arms) {
    const auto runs = std::count_if(units.begin(), units.end(), [&](const Unit& u) { return u.spec.at("arm") == arm; });
    costs.push_back({arm, static_cast<std::size_t>(runs), tokens_per_run, parameters, shape_of(arm), std::nullopt});
  }
  return costs;
}

train::BenchShape trainer_bench_shape(const std::function<train::TrainerConfig()>& make) {
  try {
    const auto config = make();
    return train::bench_shape(config.model, config.sequence_length, config.resolved_micro_batch_rows());
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("the arm's trainer configuration cannot be built: ") + e.what()};
  }
}

nlohmann::json trainer_arm_costs_json(const std::vector<std::string>& arms, const std::vector<Unit>& units,
                                      double tokens_per_run, double parameters,
                                      const std::function<train::TrainerConfig(const std::string&)>& config_of) {
  const auto shape_of = [&](const std::string& arm) { return trainer_bench_shape([&] { return config_of(arm); }); };
  auto costs = arm_costs(arms, units, tokens_per_run, parameters, shape_of);
  for (auto& cost : costs) cost.memory = trainer_memory([&] { return config_of(cost.arm); });
  return arm_costs_json(costs);
}

void add_trainer_costs(nlohmann::json& details, const RunCost& cost, const std::vector<std::string>& arms,
                       const std::vector<Unit>& units,
                       const std::function<train::TrainerConfig(const std::string&)>& config_of,
                       const EvaluationCost& evaluation) {
  add_run_estimate(details, cost, units.size());
  details["gpu_hours_by_arm"] = trainer_arm_costs_json(arms, units, cost.tokens_per_run, cost.parameters, config_of);
  details["evaluation_cost"] = evaluation_cost_json(evaluation);
}

EvaluationPart validation_loss_part(const TokenSchedule& schedule, double training_tokens) {
  const double evaluations = training_tokens / static_cast<double>(schedule.eval_interval_tokens);
  return {"validation loss",
          {"eval_interval_tokens", "validation_tokens"},
          evaluations * static_cast<double>(schedule.validation_tokens)};
}

std::vector<EvaluationPart> downstream_parts(const DownstreamBlock& block, double scored_runs, std::int64_t max_length) {
  if (!block.downstream) return {};
  const auto& s = *block.downstream;
  std::string what = "downstream suite " + s.suite + " (multiple choice, forward only)";
  if (s.suite != train::kBuiltinSuiteId) what += ", assuming about 100 tokens a padded row (the file is not read)";
  return {{what,
           {"downstream.at_tokens", "downstream.suite", "downstream.batch_rows"},
           scored_runs * static_cast<double>(s.at_tokens.size()) * downstream_tokens_per_scoring(s, max_length)}};
}

nlohmann::json runs_by_arm_and_seed(const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> by_arm, by_seed;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_seed[std::to_string(u.spec.at("seed").get<std::uint64_t>())];
  }
  return {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
}

}  // namespace k3lab::experiments::training
