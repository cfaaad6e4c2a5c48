#include "k3lab/experiments/training/proxy_experiment.hpp"

#include <algorithm>

namespace k3lab::experiments::training {

namespace {

// The first data-unavailable failure wins over the first stopping invalid record, wherever each stands.
class ProxyWindowRule final : public WindowRule {
 public:
  explicit ProxyWindowRule(std::vector<std::string> stop_on_invalid) : stop_on_invalid_(std::move(stop_on_invalid)) {}

  void add(const nlohmann::json& r) override {
    if (!data_stop_) data_stop_ = data_unavailable_stop(r);
    if (invalid_stop_ || r.value("kind", "") != "invalid") return;
    const auto reason = r.value("reason", std::string());
    if (std::find(stop_on_invalid_.begin(), stop_on_invalid_.end(), reason) != stop_on_invalid_.end()) {
      invalid_stop_ = WindowVerdict{true, r.value("detail", std::string()), nlohmann::json::object()};
    }
  }
  WindowVerdict verdict() const override { return data_stop_ ? *data_stop_ : invalid_stop_.value_or(WindowVerdict{}); }

 private:
  std::vector<std::string> stop_on_invalid_;
  std::optional<WindowVerdict> data_stop_, invalid_stop_;
};

}  // namespace

std::unique_ptr<WindowRule> proxy_window_rule(std::vector<std::string> stop_on_invalid) {
  return std::make_unique<ProxyWindowRule>(std::move(stop_on_invalid));
}

void set_smoke_transfer_limit(const std::string& experiment_id, const RunScale& smoke, const RunScale& full,
                              report::Page& page) {
  page.can_say = {smoke_can_say(experiment_id, smoke, full)};
}

void add_records_table(const core::Protocol& protocol, const RunRecords& records,
                       const std::optional<std::vector<Unit>>& planned, const RecordsByGroupTable& table,
                       bool intro, report::Page& page) {
  if (intro) page.add_text(protocol.id + ": terminal records by arm against the plan; the results follow.");
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::training
