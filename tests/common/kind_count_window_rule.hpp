#pragma once
// A window rule for test modules: stop once `limit` terminal records of one kind have been added,
// reason `reason`, data {<data_key>: count}. Header-only: for test binaries that link the experiments spine
// (k3lab_test_common itself stays core-free).
#include <memory>
#include <string>
#include <utility>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::testing {

class KindCountWindowRule final : public experiments::WindowRule {
 public:
  KindCountWindowRule(std::string kind, int limit, std::string reason, std::string data_key)
      : kind_(std::move(kind)), limit_(limit), reason_(std::move(reason)), data_key_(std::move(data_key)) {}

  void add(const nlohmann::json& record) override { count_ += record.value("kind", "") == kind_ ? 1 : 0; }
  experiments::WindowVerdict verdict() const override {
    if (count_ < limit_) return {};
    return {true, reason_, {{data_key_, count_}}};
  }

 private:
  std::string kind_;
  int limit_;
  std::string reason_;
  std::string data_key_;
  int count_ = 0;
};

}  // namespace k3lab::testing
