#include "k3lab/experiments/run_publication.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "k3lab/analysis_info.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments {
namespace {

report::Block markdown(std::string text) {
  report::Block block;
  block.kind = report::Block::Kind::Markdown;
  block.markdown = std::move(text);
  return block;
}

std::string seconds_text(double seconds) {
  char text[64];
  if (seconds < 120) {
    std::snprintf(text, sizeof text, "%.3g s", seconds);
  } else {
    std::snprintf(text, sizeof text, "%.0f s (%.2f h)", seconds, seconds / 3600.0);
  }
  return text;
}

std::string revision_statement(const nlohmann::json& provenance) {
  const std::string revision = provenance.value("source_revision", "");
  if (revision.empty() || revision == "unknown") {
    return "**Source revision: NOT RECORDED** (" + provenance.value("source_revision_from", "the run predates this "
                                                                    "field") + "); the code that produced these "
           "numbers cannot be named from this run dir.";
  }
  std::string text = "**Source revision:** `" + revision + "`";
  if (provenance.value("source_dirty", false)) {
    text += " — **DIRTY TREE**: uncommitted changes were present when the run started, so this revision alone does "
            "not reproduce it";
  } else {
    text += " (clean tree)";
  }
  if (provenance.contains("source_revision_from")) text += "; read from " + provenance.value("source_revision_from", "");
  return text + ".";
}

std::string joined_command(const nlohmann::json& argv) {
  std::string out;
  for (const auto& arg : argv) {
    const std::string word = arg.is_string() ? arg.get<std::string>() : arg.dump();
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

}  // namespace

std::string recorded_runs_folder(const nlohmann::json& manifest) {
  const auto& provenance = manifest.value("provenance", nlohmann::json::object());
  const auto& argv = provenance.value("command_line", nlohmann::json::array());
  std::string folder;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (!argv[i].is_string()) continue;
    const std::string word = argv[i].get<std::string>();
    if (word == "--out" && i + 1 < argv.size() && argv[i + 1].is_string()) folder = argv[i + 1].get<std::string>();
    if (word.rfind("--out=", 0) == 0) folder = word.substr(6);
  }
  if (folder == RunRequest{}.runs_root.string()) return "";
  if (folder.find_first_of(" \t'\"$\\") == std::string::npos) return folder;
  std::string quoted = "'";
  for (const char c : folder) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string resume_command(const nlohmann::json& manifest, const std::string& id, const std::string& profile) {
  const std::string folder = recorded_runs_folder(manifest);
  return "build/k3lab run " + id + " --profile " + profile + (folder.empty() ? "" : " --out " + folder);
}

namespace {

std::string commands(const RunRecords& records, const std::string& id, const std::string& profile) {
  const auto& provenance = records.manifest.value("provenance", nlohmann::json::object());
  const auto& protocol = records.manifest.value("protocol", nlohmann::json::object());
  std::string text = "**Protocol version:** " + std::to_string(protocol.value("version", 1)) + " (sha256 `" +
                     records.manifest.value("protocol_sha256", "") + "`)\n\n";
  text += "**Commands** (from the repository root at that revision; README, Quick start):\n\n";
  text += "- set up: `scripts/setup.sh`\n";
  text += "- run (again, it resumes): `" + resume_command(records.manifest, id, profile) + "`";
  if (provenance.contains("command_line")) text += "; as recorded: `" + joined_command(provenance["command_line"]) + "`";
  const std::string folder = recorded_runs_folder(records.manifest);
  text += "\n- regenerate this page from the run dir alone: `build/k3lab report" +
          (folder.empty() ? std::string() : " --runs " + folder) + "` (add `--out` for another report folder)\n";
  return text;
}

std::string hardware_line(const nlohmann::json& manifest) {
  const auto& provenance = manifest.value("provenance", nlohmann::json::object());
  const auto& options = manifest.value("options", nlohmann::json::object());
  std::string text = "**Machine** (where the run started): " + provenance.value("cpu", std::string("cpu not recorded"));
  if (provenance.contains("cpu_cores")) text += ", " + provenance["cpu_cores"].dump() + " logical cores";
  if (options.contains("device") && options["device"].is_string()) text += "; device option `" + options["device"].get<std::string>() + "`";
  if (provenance.contains("build")) text += "; build: " + provenance.value("build", "");
  return text + ".";
}

struct UnitTime {
  std::string unit;
  std::string kind;
  double seconds = 0;
  std::optional<double> tokens;
};

std::vector<UnitTime> unit_times(const core::LedgerRecords& terminal) {
  std::vector<UnitTime> out;
  for (const auto& r : terminal) {
    UnitTime t{r.value("unit", ""), r.value("kind", ""), 0, std::nullopt};
    const auto timing = r.value("timing", nlohmann::json::object());
    if (timing.contains("unit_seconds") && timing["unit_seconds"].is_number()) t.seconds = timing["unit_seconds"].get<double>();
    const auto data = r.value("data", nlohmann::json::object());
    if (data.contains("training") && data["training"].is_object() && data["training"].contains("tokens") &&
        data["training"]["tokens"].is_number()) {
      t.tokens = data["training"]["tokens"].get<double>();
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string time_summary(const RunRecords& records, const std::vector<UnitTime>& times) {
  std::vector<double> seconds;
  double total = 0, tokens = 0;
  bool any_tokens = false;
  for (const auto& t : times) {
    seconds.push_back(t.seconds);
    total += t.seconds;
    if (t.tokens) tokens += *t.tokens, any_tokens = true;
  }
  std::string text = "**Wall time:** ";
  if (times.empty()) return text + "no unit has ended yet.";
  text += seconds_text(total) + " of unit time over " + std::to_string(times.size()) + " ended units (median " +
          seconds_text(report::median(seconds)) + ", longest " +
          seconds_text(*std::max_element(seconds.begin(), seconds.end())) + " per unit)";
  const auto& provenance = records.manifest.value("provenance", nlohmann::json::object());
  // The last record that carries a time, read from the end (one record, not the whole ledger, is parsed).
  std::string last;
  for (std::size_t i = records.ledger.records.size(); i-- > 0 && last.empty();) {
    last = records.ledger.records[i].value("t", "");
  }
  if (provenance.contains("started_at") && !last.empty()) {
    text += "; first started " + provenance.value("started_at", "") + ", last record " + last +
            " (the span includes any pause between resumes)";
  }
  text += ".";
  if (any_tokens) {
    char amount[64];
    std::snprintf(amount, sizeof amount, "%.0f", tokens);
    text += " **Tokens:** " + std::string(amount) + " training tokens over the runs that recorded them.";
  }
  return text;
}

report::Table unit_time_table(const std::vector<UnitTime>& times) {
  report::Table table;
  table.id = "wall-time-by-run";
  table.title = "Wall time and tokens per run";
  const bool tokens = std::any_of(times.begin(), times.end(), [](const UnitTime& t) { return t.tokens.has_value(); });
  table.columns = {"unit", "outcome", "wall time (s)"};
  if (tokens) table.columns.push_back("training tokens");
  for (const auto& t : times) {
    std::vector<report::Cell> row = {report::Cell(t.unit), report::Cell(t.kind), report::Cell(t.seconds, 3)};
    if (tokens) row.push_back(t.tokens ? report::Cell(static_cast<std::int64_t>(*t.tokens)) : report::Cell("–"));
    table.rows.push_back(std::move(row));
  }
  table.caption = "Wall time is the unit's own time (timing.unit_seconds in its terminal record); it varies between "
                  "machines and runs and is not part of the deterministic results.";
  return table;
}

}  // namespace

std::string analysis_statement(const nlohmann::json& manifest) {
  std::string text = "**Analysis:** rendered by analysis version " + std::string(build::kAnalysisVersion) +
                     " (sources sha256 `" + build::kAnalysisSha256 + "`); ";
  const auto& record = manifest.value("freeze_record", nlohmann::json::object());
  if (!manifest.value("frozen", false)) return text + "the run was not frozen, so no analysis was frozen for it.";
  if (!record.contains("analysis")) {
    return text + "the protocol's freeze record at the start of the run names no analysis (frozen before analyses "
                  "were; `k3lab freeze <id> --analysis` records one for later runs).";
  }
  const std::string version = record["analysis"].value("version", "");
  const std::string sha = record["analysis"].value("sources_sha256", "");
  if (sha == build::kAnalysisSha256) return text + "the same analysis was frozen with the protocol.";
  return text + "**DIFFERS from the analysis frozen with the protocol** (version " + version + ", sources sha256 `" +
         sha + "`): this page was rendered by other report and decision code than the protocol froze.";
}

void add_reproduce_section(const RunRecords& records, const core::LedgerRecords& terminal, report::Page& page) {
  const auto& provenance = records.manifest.value("provenance", nlohmann::json::object());
  const auto times = unit_times(terminal);
  page.reproduce.push_back(markdown(revision_statement(provenance)));
  page.reproduce.push_back(markdown(analysis_statement(records.manifest)));
  page.reproduce.push_back(markdown(commands(records, page.experiment_id, page.profile)));
  page.reproduce.push_back(markdown(hardware_line(records.manifest)));
  page.reproduce.push_back(markdown(time_summary(records, times)));
  if (!times.empty() && times.size() <= kMaxUnitsListed) {
    report::Block block;
    block.kind = report::Block::Kind::Table;
    block.table = unit_time_table(times);
    page.reproduce.push_back(std::move(block));
  } else if (times.size() > kMaxUnitsListed) {
    page.reproduce.push_back(markdown("Per-unit wall times of these " + std::to_string(times.size()) +
                                      " units are in the ledger (timing.unit_seconds of each terminal record)."));
  }
}

}  // namespace k3lab::experiments
