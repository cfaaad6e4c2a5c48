#include "router_balance/moe_block.hpp"

#include <string>

#include <torch/torch.h>

#include "router_balance/routing_metrics.hpp"

namespace k3lab::experiments::router_balance {
namespace {

std::vector<double> to_doubles(const torch::Tensor& t) {
  const auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace

std::vector<BlockMeasurement> measure_blocks(const std::vector<models::RoutingStats>& routing) {
  std::vector<BlockMeasurement> blocks;
  for (const auto& r : routing) {
    BlockMeasurement b;
    b.loads = to_doubles(r.loads);
    b.dropped = r.dropped;
    b.cv = load_cv(b.loads);
    b.max_to_mean = max_to_mean(b.loads);
    b.dropped_rate = dropped_rate(r.dropped, r.assignments);
    blocks.push_back(std::move(b));
  }
  return blocks;
}

nlohmann::json logged_measurements(const std::vector<BlockMeasurement>& blocks) {
  nlohmann::json layers = nlohmann::json::array();
  double cv = 0, max_mean = 0, dropped = 0;
  for (const auto& b : blocks) {
    cv += b.cv;
    max_mean += b.max_to_mean;
    dropped += b.dropped_rate;
    layers.push_back({{"cv", b.cv}, {"max_to_mean", b.max_to_mean}, {"dropped_rate", b.dropped_rate}});
  }
  const double n = static_cast<double>(blocks.size());
  return {{"expert_load_cv", cv / n}, {"max_to_mean_load", max_mean / n}, {"dropped_token_rate", dropped / n},
          {"layers", layers}};
}

nlohmann::json run_routing_metrics(const nlohmann::json& logged) {
  // Summed per record first, then over records, as the records' own means are.
  double cv_sum = 0, max_mean_sum = 0, dropped_sum = 0;
  std::int64_t blocks = 0;
  for (const auto& record : logged) {
    double cv = 0, max_mean = 0, dropped = 0;
    for (const auto& layer : record.at("layers")) {
      cv += layer.at("cv").get<double>();
      max_mean += layer.at("max_to_mean").get<double>();
      dropped += layer.at("dropped_rate").get<double>();
    }
    cv_sum += cv;
    max_mean_sum += max_mean;
    dropped_sum += dropped;
    blocks += static_cast<std::int64_t>(record.at("layers").size());
  }
  const auto n = static_cast<double>(blocks);
  return {{"expert_load_cv", cv_sum / n}, {"max_to_mean_load", max_mean_sum / n}, {"dropped_token_rate", dropped_sum / n}};
}

RoutingLog::RoutingLog(std::filesystem::path path) : path_(std::move(path)) {}

void RoutingLog::open_at(std::int64_t step) {
  if (path_.empty()) return;
  std::filesystem::create_directories(path_.parent_path());
  std::string kept;
  if (step > 0 && std::filesystem::exists(path_)) {
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (record.is_object() && record.value("update", step) < step) kept += line + '\n';
    }
  }
  out_.close();
  out_.open(path_, std::ios::trunc);
  out_ << kept << std::flush;
}

void RoutingLog::write(std::int64_t update, double primary_loss, const std::vector<BlockMeasurement>& blocks,
                       const std::vector<std::vector<double>>& biases) {
  if (!out_.is_open()) return;
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    layers.push_back({{"loads", blocks[l].loads}, {"dropped", blocks[l].dropped}, {"bias_after_update", biases[l]}});
  }
  out_ << nlohmann::json{{"update", update}, {"primary_loss", primary_loss}, {"layers", layers}}.dump() << '\n' << std::flush;
}

}  // namespace k3lab::experiments::router_balance
