#include "k3lab/experiments/report_builder.hpp"

#include <map>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {
namespace {

std::string frozen_detail(const nlohmann::json& manifest) {
  if (!manifest.value("frozen", false)) {
    return "NOT FROZEN: this run used --unfrozen or --set; it is a development run, not a result of the frozen "
           "protocol";
  }
  const auto& record = manifest["freeze_record"];
  return "FROZEN: protocol sha256 " + manifest.value("protocol_sha256", "") + ", frozen at " +
         record.value("frozen_at", "?") + " (source rev " + record.value("source_revision", "?") + ")";
}

}  // namespace

report::Page build_page(const std::filesystem::path& run_dir, const std::filesystem::path& runs_root) {
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  const auto& manifest = records.manifest;
  const std::string id = manifest.at("experiment").get<std::string>();
  const auto protocol = core::protocol_from_document(manifest.at("protocol"), run_dir / "manifest.json");
  auto experiment = make_experiment(id);

  report::Page page;
  page.experiment_id = id;
  page.title = protocol.title;
  page.evidence_class = protocol.evidence_class;
  page.profile = manifest.value("profile", "");
  page.run_dir = std::filesystem::relative(run_dir, runs_root).string();
  page.frozen = manifest.value("frozen", false);
  page.frozen_detail = frozen_detail(manifest);
  page.labels = manifest.value("labels", std::vector<std::string>{});
  page.can_say = protocol.can_say;
  page.cannot_say = protocol.cannot_say;
  page.provenance = manifest.value("provenance", nlohmann::json::object());
  page.provenance["protocol_sha256"] = manifest.value("protocol_sha256", "");
  page.provenance["profile"] = page.profile;

  const auto terminal = records.terminal_records();
  std::map<std::string, std::size_t> counts;
  for (const auto& r : terminal) {
    const std::string kind = r.value("kind", "");
    ++counts[kind];
    if (kind == "failure") {
      page.failures.push_back({r.value("unit", ""), kind, r.value("reason", ""), r.value("detail", "")});
    } else if (kind == "invalid") {
      page.excluded.push_back({r.value("unit", ""), kind, r.value("reason", ""), r.value("detail", "")});
    }
  }
  std::string window_reason;
  for (const auto& r : records.ledger.records) {
    if (r.value("kind", "") == "window") {
      page.failures.push_back({"(window)", "window", r.value("reason", ""), r.contains("data") ? r["data"].dump() : ""});
      if (r.value("stop", false)) window_reason = r.value("reason", "");
    }
  }
  const std::size_t planned = manifest.value("units_planned", std::size_t{0});
  const std::string tally = std::to_string(terminal.size()) + " of " + std::to_string(planned) + " units (results " +
                            std::to_string(counts["result"]) + ", invalid " + std::to_string(counts["invalid"]) +
                            ", failures " + std::to_string(counts["failure"]) + ")";
  if (!window_reason.empty()) {
    page.status = "STOPPED by the window rule (" + window_reason + "): " + tally;
  } else if (terminal.size() >= planned) {
    page.status = "complete: " + tally;
  } else {
    page.status = "INCOMPLETE: " + tally + "; resume with `k3lab run " + id + " --profile " + page.profile + "`";
  }
  experiment->summarise(protocol, records, page);
  return page;
}

std::vector<report::IndexEntry> build_reports(const std::filesystem::path& runs_root,
                                              const std::filesystem::path& out_root) {
  std::vector<report::IndexEntry> entries;
  std::filesystem::create_directories(out_root);
  for (const auto& id : core::experiment_ids()) {
    for (const auto& profile : core::profile_names()) {
      const auto run = core::latest_run_dir(runs_root, id, profile);
      if (!run) continue;
      const auto page = build_page(run->path, runs_root);
      const auto folder = report::render_page(page, out_root);
      entries.push_back({page.experiment_id, page.title, page.evidence_class, page.profile, page.status, page.frozen,
                         std::filesystem::relative(folder, out_root).string(), page.labels});
    }
  }
  report::render_index(entries, out_root);
  return entries;
}

}  // namespace k3lab::experiments
