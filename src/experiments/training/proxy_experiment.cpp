#include "k3lab/experiments/training/proxy_experiment.hpp"

#include <algorithm>

namespace k3lab::experiments::training {

WindowVerdict proxy_window_verdict(const std::vector<nlohmann::json>& terminal_records,
                                   const std::vector<std::string>& stop_on_invalid) {
  if (auto stop = data_unavailable_stop(terminal_records)) return *stop;
  for (const auto& r : terminal_records) {
    const auto reason = r.value("reason", std::string());
    if (r.value("kind", "") == "invalid" &&
        std::find(stop_on_invalid.begin(), stop_on_invalid.end(), reason) != stop_on_invalid.end()) {
      return {true, r.value("detail", std::string()), nlohmann::json::object()};
    }
  }
  return {};
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
