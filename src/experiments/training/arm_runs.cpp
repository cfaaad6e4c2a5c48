#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::training {

const nlohmann::json* result_data(const nlohmann::json& record, std::initializer_list<const char*> required,
                                  RunIdentity& identity) {
  if (record.value("kind", "") != "result" || !record.contains("data")) return nullptr;
  const auto& data = record.at("data");
  for (const char* key : required) {
    if (!data.contains(key)) return nullptr;
  }
  identity.arm = data.at("arm").get<std::string>();
  identity.seed = data.at("seed").get<std::uint64_t>();
  return &data;
}

}  // namespace k3lab::experiments::training
