#include "per_head_muon/selection.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

double pilot_loss(const nlohmann::json& record) {
  constexpr double kInfinite = std::numeric_limits<double>::infinity();
  if (record.value("kind", "") != "result") return kInfinite;
  // A result without evaluations (malformed) cannot rank a configuration: infinite, like a failure.
  const auto data = record.value("data", nlohmann::json::object());
  const auto training = data.is_object() ? data.value("training", nlohmann::json::object()) : nlohmann::json::object();
  const auto evaluations = training.value("evaluations", nlohmann::json::array());
  if (evaluations.empty() || !evaluations.back().contains("validation_loss")) return kInfinite;
  return evaluations.back().at("validation_loss").get<double>();
}

Selection select_configuration(const Parameters& p, const std::string& arm,
                               const std::vector<nlohmann::json>& terminal_records) {
  std::map<std::string, const nlohmann::json*> by_unit;
  for (const auto& r : terminal_records) by_unit[r.value("unit", "")] = &r;
  Selection s;
  s.arm = arm;
  for (const auto& c : p.configurations()) {
    ConfigurationScore score{c, {}, 0};
    for (auto seed : p.pilot_seeds) {
      const auto id = pilot_unit_id(arm, c.id, seed);
      const auto it = by_unit.find(id);
      if (it == by_unit.end()) {
        s.missing.push_back(id);
        continue;
      }
      score.losses.push_back(pilot_loss(*it->second));
    }
    double sum = 0;
    for (double l : score.losses) sum += l;
    score.mean_loss = score.losses.empty() ? std::numeric_limits<double>::infinity() : sum / score.losses.size();
    s.scores.push_back(score);
  }
  if (!s.missing.empty()) return s;
  const ConfigurationScore* best = nullptr;
  for (const auto& score : s.scores) {
    if (!best || score.mean_loss < best->mean_loss) best = &score;  // strict: ties keep the lower id
  }
  if (best) s.selected = best->configuration;
  return s;
}

nlohmann::json Selection::to_json() const {
  nlohmann::json scores_json = nlohmann::json::array();
  for (const auto& s : scores) {
    nlohmann::json losses = nlohmann::json::array();
    for (double l : s.losses) losses.push_back(finite_or_null(l));
    scores_json.push_back({{"config", s.configuration.id},
                           {"learning_rate", s.configuration.learning_rate},
                           {"weight_decay", s.configuration.weight_decay},
                           {"pilot_losses", losses},
                           {"mean_loss", finite_or_null(s.mean_loss)}});
  }
  nlohmann::json j = {{"arm", arm}, {"rule", kSelectionRule}, {"scores", scores_json}, {"missing", missing}};
  if (selected) {
    j["selected"] = {{"config", selected->id}, {"learning_rate", selected->learning_rate}, {"weight_decay", selected->weight_decay}};
  }
  return j;
}

}  // namespace k3lab::experiments::per_head_muon
