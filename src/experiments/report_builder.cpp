#include "k3lab/experiments/report_builder.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/hardware_check.hpp"
#include "k3lab/experiments/run_history.hpp"
#include "k3lab/experiments/run_publication.hpp"

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

// Where the notes of run dirs that could not be rendered go, one folder per run dir.
constexpr const char* kDamagedFolder = "damaged";

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// A folder name for the note page: the run dir's name with anything but [A-Za-z0-9._-] replaced.
std::string note_folder_name(const std::filesystem::path& run_dir) {
  std::string name = run_dir.filename().string();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return name.empty() || name.front() == '.' ? "_" + name : name;
}

// Writes the run dir's note page and index entry, and lists it as damaged.
void add_damaged(ReportOutcome& outcome, DamagedRun damaged, const std::string& profile,
                 const std::filesystem::path& runs_root, const std::filesystem::path& out_root) {
  const std::string shown = std::filesystem::relative(damaged.run_dir, runs_root).string();
  const std::filesystem::path page_dir =
      std::filesystem::path(kDamagedFolder) / damaged.experiment_id / note_folder_name(damaged.run_dir);
  std::filesystem::create_directories(out_root / page_dir);
  core::write_file_atomically(out_root / page_dir / "index.md",
                              "# " + damaged.experiment_id + ": a run dir that could not be rendered\n\nRun dir: `" +
                                  shown + "` (under the runs folder)\n\n```\n" + damaged.error +
                                  "\n```\n\nNothing from this run dir appears in the report. Every other run was "
                                  "rendered as usual; `k3lab report` exits with status 1 until it is repaired or set "
                                  "aside.\n");
  outcome.entries.push_back({damaged.experiment_id, "", "", profile, "DAMAGED: " + one_line(damaged.error), false,
                             page_dir.string(), {"damaged run dir " + shown + ": not rendered"}});
  outcome.damaged.push_back(std::move(damaged));
}

// "key = value" for every leaf of a profile's patch, the value read from the resolved parameters.
void list_profile_sizes(const nlohmann::json& patch, const nlohmann::json& resolved, const std::string& prefix,
                        std::vector<std::string>& out) {
  for (const auto& [key, value] : patch.items()) {
    const auto path = prefix.empty() ? key : prefix + "." + key;
    const auto actual = resolved.is_object() && resolved.contains(key) ? resolved.at(key) : value;
    if (value.is_object()) {
      list_profile_sizes(value, actual, path, out);
    } else if (actual.is_array() && std::any_of(actual.begin(), actual.end(), [](const auto& v) { return v.is_structured(); })) {
      out.push_back(path + " = " + std::to_string(actual.size()) + " entries");
    } else {
      out.push_back(path + " = " + (actual.is_string() ? actual.get<std::string>() : actual.dump()));
    }
  }
}

// A smoke page's transfer limit: what the run's real sizes allow (a module with more facts, such as
// the proxy-training layer, replaces the can-say line in its summary) and one cannot-say line in
// place of the protocol's, which are written for full-profile runs.
void set_smoke_transfer_limit(const core::Protocol& protocol, const nlohmann::json& manifest, report::Page& page) {
  std::vector<std::string> sizes;
  const auto& profiles = protocol.document.value("profiles", nlohmann::json::object());
  if (profiles.contains("smoke")) {
    list_profile_sizes(profiles.at("smoke"), manifest.value("parameters", nlohmann::json::object()), "", sizes);
  }
  std::string listed;
  for (const auto& size : sizes) listed += (listed.empty() ? "" : "; ") + size;
  page.can_say = {"Only that the " + protocol.id + " pipeline runs end to end at the smoke profile's toy sizes (" +
                  std::to_string(manifest.value("units_planned", std::size_t{0})) + " units; " +
                  (listed.empty() ? std::string("no parameter differs from the full profile") : listed) + ")."};
  page.cannot_say = {"Anything about the hypothesis, at these sizes or at the full profile's: smoke runs check the "
                     "code, they are not evidence (the protocol's transfer limits apply to full-profile runs)."};
}

// Two terminal records for one unit mean two processes ran it; which stands is for a person to decide,
// so the page says so at the top and lists each in its failure log (never one picked silently).
void flag_duplicates(const core::LedgerContents& ledger, report::Page& page) {
  const auto duplicates = core::describe_duplicates(core::duplicate_terminal_records(ledger));
  if (duplicates.empty()) return;
  for (const auto& line : duplicates) page.failures.push_back({"(ledger)", "duplicate", "two terminal records", line});
  page.status = std::string(kLedgerErrorStatus) + ": " + std::to_string(duplicates.size()) +
                " unit(s) with more than one terminal record (see the failure log; move the wrong line out of the "
                "ledger); " + page.status;
}

}  // namespace

namespace {

RunPage build_run_page(const std::filesystem::path& run_dir, const std::filesystem::path& runs_root,
                       const Catalog& catalog) {
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  const auto& manifest = records.manifest;
  const std::string id = manifest.at("experiment").get<std::string>();
  const auto protocol = core::protocol_from_document(manifest.at("protocol"), run_dir / "manifest.json");
  auto experiment = catalog.make(id);

  RunPage run;
  report::Page& page = run.page;
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
  if (page.profile == "smoke") set_smoke_transfer_limit(protocol, manifest, page);
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
  run.window_rule = window_reason;
  run.failures = counts["failure"];
  run.complete = window_reason.empty() && terminal.size() >= planned;
  if (!window_reason.empty()) {
    page.status = "STOPPED by the window rule (" + window_reason + "): " + tally;
  } else if (terminal.size() >= planned) {
    page.status = "complete: " + tally;
  } else {
    page.status = "INCOMPLETE: " + tally + "; resume with `" + resume_command(records.manifest, id, page.profile) +
                  "` from the folder it was started in (Reproduce)";
  }
  add_hardware_check(protocol, records, page);
  flag_duplicates(records.ledger, page);
  experiment->summarise(protocol, records, page);
  add_reproduce_section(records, terminal, page);
  return run;
}

// Renders every run of one experiment and profile (oldest first): the headline at the page folder, the
// others under its runs/ folder; adds the headline's index entry to `outcome`.
void render_runs(std::vector<RunPage>& runs, const std::filesystem::path& out_root, ReportOutcome& outcome) {
  // Run dir names sort by their start second; the manifest's start time orders runs of the same second.
  std::stable_sort(runs.begin(), runs.end(), [](const RunPage& a, const RunPage& b) {
    return a.page.provenance.value("started_at", "") < b.page.provenance.value("started_at", "");
  });
  const std::size_t headline = headline_run(runs);
  link_run_history(runs, headline);
  const std::filesystem::path folder = report::page_folder(runs[headline].page, out_root);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (r != headline) report::render_page_into(runs[r].page, folder / other_run_folder(runs[r].page));
  }
  const report::Page& page = runs[headline].page;
  report::render_page(page, out_root);
  std::string status = page.status;
  if (runs.size() > 1) status += " (headline of " + std::to_string(runs.size()) + " runs; every run is on its page)";
  outcome.entries.push_back({page.experiment_id, page.title, page.evidence_class, page.profile, status, page.frozen,
                             std::filesystem::relative(folder, out_root).string(), page.labels});
}

}  // namespace

report::Page build_page(const std::filesystem::path& run_dir, const std::filesystem::path& runs_root,
                        const Catalog& catalog) {
  return build_run_page(run_dir, runs_root, catalog).page;
}



ReportOutcome build_reports(const std::filesystem::path& runs_root, const std::filesystem::path& out_root,
                            const Catalog& catalog) {
  ReportOutcome outcome;
  std::filesystem::create_directories(out_root);
  // An earlier report's notes go; those of run dirs still damaged are written again below.
  std::filesystem::remove_all(out_root / kDamagedFolder);
  for (const auto& id : catalog.ids) {
    core::RunDirScan scan;
    try {
      scan = core::scan_run_dirs(runs_root, id);
    } catch (const std::exception& e) {
      add_damaged(outcome, {id, runs_root / id, e.what()}, "", runs_root, out_root);
      continue;
    }
    for (const auto& profile : core::profile_names()) {
      std::vector<RunPage> runs;
      for (const auto& run : scan.runs) {
        if (run.manifest.at("profile") != profile) continue;
        try {
          runs.push_back(build_run_page(run.path, runs_root, catalog));
        } catch (const std::exception& e) {
          add_damaged(outcome, {id, run.path, e.what()}, profile, runs_root, out_root);
          continue;
        }
        const auto& status = runs.back().page.status;
        if (status.rfind(kLedgerErrorStatus, 0) == 0) outcome.ledger_errors.push_back({id, run.path, status});
      }
      if (!runs.empty()) render_runs(runs, out_root, outcome);
    }
    for (const auto& damaged : scan.damaged) {
      add_damaged(outcome, {id, damaged.run_dir(), damaged.what()}, "", runs_root, out_root);
    }
  }
  report::render_index(outcome.entries, out_root);
  return outcome;
}

}  // namespace k3lab::experiments
