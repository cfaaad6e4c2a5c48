#include "per_head_muon/head_metrics.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include <torch/linalg.h>

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::per_head_muon {

double coefficient_of_variation(const std::vector<double>& norms) {
  return report::coefficient_of_variation(norms, report::Spread::Population);
}

nlohmann::json update_dispersion(const nlohmann::json& update_norms) {
  nlohmann::json layers = nlohmann::json::array();
  double sum = 0;
  int count = 0;
  for (const auto& layer : update_norms.at("layers")) {
    nlohmann::json entry = {{"layer", layer.at("layer")}};
    for (const char* projection : {"query", "key", "value"}) {
      if (!layer.contains(projection)) continue;
      const double cv = coefficient_of_variation(layer.at(projection).get<std::vector<double>>());
      entry[projection] = cv;
      sum += cv;
      ++count;
    }
    layers.push_back(entry);
  }
  return {{"step", update_norms.value("step", 0)}, {"layers", layers}, {"mean", count ? sum / count : 0.0}};
}

double head_subspace_distance(const torch::Tensor& weight, std::int64_t heads) {
  const auto w = weight.detach().to(torch::kCPU, torch::kFloat64);  // (H d_h, D)
  const auto blocks = w.chunk(heads, 0);
  std::vector<torch::Tensor> bases;
  for (const auto& b : blocks) bases.push_back(std::get<0>(torch::linalg::qr(b.t(), "reduced")));  // (D, d_h)
  const double d_h = static_cast<double>(blocks.front().size(0));
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < bases.size(); ++i) {
    for (std::size_t j = i + 1; j < bases.size(); ++j) {
      const double overlap = torch::mm(bases[i].t(), bases[j]).pow(2).sum().item<double>();  // sum cos^2 of principal angles
      sum += std::sqrt(std::max(0.0, 1.0 - overlap / d_h));
      ++pairs;
    }
  }
  return pairs ? sum / pairs : 0.0;
}

nlohmann::json head_diversity(models::DecoderLM& model, std::int64_t heads) {
  nlohmann::json layers = nlohmann::json::array();
  double sum = 0;
  int count = 0;
  std::map<int, nlohmann::json> by_layer;
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    const char* projection = name.ends_with("attention.q_proj.weight")   ? "query"
                             : name.ends_with("attention.k_proj.weight") ? "key"
                                                                          : nullptr;
    if (!projection) continue;
    const int layer = std::stoi(name.substr(7));
    const double d = head_subspace_distance(item.value(), heads);
    by_layer[layer]["layer"] = layer;
    by_layer[layer][projection] = d;
    sum += d;
    ++count;
  }
  for (auto& [layer, entry] : by_layer) layers.push_back(entry);
  return {{"layers", layers}, {"mean", count ? sum / count : 0.0}};
}

}  // namespace k3lab::experiments::per_head_muon
