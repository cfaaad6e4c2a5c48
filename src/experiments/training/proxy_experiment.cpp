#include "k3lab/experiments/training/proxy_experiment.hpp"

#include <algorithm>

#include "k3lab/core/thread_policy.hpp"
#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/micro_batch_lanes.hpp"

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

// "Data: <dataset>, licence <..>, manifest sha256 <..>" (the built-in corpus: its sha256), from the
// first record whose unit loaded the data (every unit of a run loads the same, verified dataset).
std::string data_line(const RunRecords& records) {
  for (const auto& r : records.terminal_records()) {
    const auto& data = r.value("data", nlohmann::json::object());
    if (!data.is_object() || !data.contains("dataset") || !data.at("dataset").is_object()) continue;
    const auto& d = data.at("dataset");
    std::string line =
        "Data: " + d.value("dataset", std::string("?")) + ", licence " + d.value("licence", std::string("not stated"));
    if (d.contains("manifest_sha256")) {
      line += ", manifest sha256 `" + d.value("manifest_sha256", "") + "`";
    } else if (d.contains("sha256")) {
      line += ", sha256 `" + d.value("sha256", "") + "`";
    } else {
      line += ", not pinned by a manifest";
    }
    return d.contains("source") ? line + "; source: " + d.value("source", "") : line;
  }
  const auto& data =
      records.manifest.value("parameters", nlohmann::json::object()).value("data", nlohmann::json::object());
  return "Data: " + data.value("dataset", std::string("not recorded")) + " (no unit loaded it)";
}

}  // namespace

std::optional<std::string> memory_problem(const nlohmann::json& plan_details, const nlohmann::json& options,
                                          std::int64_t rows_per_step) {
  train::DeviceMemory memory;
  torch::Device device(torch::kCPU);
  try {
    device = train::resolve_device(options.value("device", std::string("auto")));
    memory = train::device_memory(device);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const int threads = core::choose_thread_policy(options.value("threads", 0)).threads;
  const auto lanes = [&](std::int64_t micro_batch_rows) {
    if (rows_per_step <= 0 || micro_batch_rows <= 0) return 1;
    return train::micro_batch_lanes(threads, rows_per_step / micro_batch_rows, device);
  };
  return memory_refusal(plan_details, memory.bytes, memory.name, lanes);
}

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
  page.add_text(data_line(records));
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::training
