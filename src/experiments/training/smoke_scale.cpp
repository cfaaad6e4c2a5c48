#include "k3lab/experiments/training/smoke_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

namespace k3lab::experiments::training {
namespace {

// The plan's parameter figure: an estimate key naming parameters, else the parameter target.
std::optional<std::pair<double, std::string>> planned_parameters(const nlohmann::json& plan) {
  if (plan.contains("estimate") && plan.at("estimate").is_object()) {
    for (const auto& [key, value] : plan.at("estimate").items()) {
      if (key.find("parameters") != std::string::npos && value.is_number()) {
        std::string name = key;
        std::replace(name.begin(), name.end(), '_', ' ');
        return std::pair{value.get<double>(), name + " (plan estimate)"};
      }
    }
  }
  if (plan.contains("parameters") && plan.at("parameters").is_object() && plan.at("parameters").contains("target")) {
    return std::pair{plan.at("parameters").at("target").get<double>(), "trainable parameters (the plan's target)"};
  }
  return std::nullopt;
}

std::string seeds_text(const std::vector<std::uint64_t>& seeds) {
  std::string text;
  for (auto seed : seeds) text += (text.empty() ? "" : ", ") + std::to_string(seed);
  return text;
}

}  // namespace

std::string count_text(double value) {
  const auto digits = std::to_string(std::llabs(std::llround(value)));
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return (value < 0 ? "-" : "") + text;
}

RunScale run_scale(const nlohmann::json& plan, const std::vector<Unit>& units, const std::vector<nlohmann::json>& terminal) {
  RunScale scale;
  scale.runs = units.size();
  for (const auto& unit : units) {
    const auto seed = unit.spec.value("seed", std::uint64_t{0});
    if (std::find(scale.seeds.begin(), scale.seeds.end(), seed) == scale.seeds.end()) scale.seeds.push_back(seed);
  }
  if (!units.empty()) scale.tokens_per_run = plan.value("training_tokens_total", 0.0) / static_cast<double>(units.size());
  std::vector<double> measured;
  for (const auto& record : terminal) {
    const auto data = record.value("data", nlohmann::json::object());
    if (record.value("kind", "") == "result" && data.contains("parameters") && data.at("parameters").is_number()) {
      measured.push_back(data.at("parameters").get<double>());
    }
  }
  if (!measured.empty()) {
    const auto [low, high] = std::minmax_element(measured.begin(), measured.end());
    scale.parameters = count_text(*low) + (*low == *high ? "" : " to " + count_text(*high)) +
                       " trainable parameters (measured in the ledger)";
  } else if (auto planned = planned_parameters(plan)) {
    scale.parameters = count_text(planned->first) + " " + planned->second;
  } else {
    scale.parameters = "an unstated number of parameters";
  }
  return scale;
}

std::string smoke_can_say(const std::string& experiment_id, const RunScale& smoke, const RunScale& full) {
  return "Only that the " + experiment_id + " code path runs end to end at the smoke profile's toy sizes: " +
         smoke.parameters + " per model, about " + count_text(smoke.tokens_per_run) + " training tokens per run, " +
         std::to_string(smoke.runs) + " runs over seeds " + seeds_text(smoke.seeds) + ". The full profile plans " +
         full.parameters + ", about " + count_text(full.tokens_per_run) + " training tokens per run and " +
         std::to_string(full.runs) + " runs.";
}

}  // namespace k3lab::experiments::training
