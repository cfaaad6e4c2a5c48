#include "k3lab/core/freeze.hpp"

#include "k3lab/analysis_info.hpp"
#include "k3lab/build_info.hpp"
#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/run_dir.hpp"

namespace k3lab::core {

nlohmann::json FreezeRecord::to_json() const {
  nlohmann::json j = {{"id", id},
                      {"protocol_sha256", protocol_sha256},
                      {"source_revision", source_revision},
                      {"source_dirty", source_dirty},
                      {"frozen_at", frozen_at},
                      {"k3lab_version", k3lab_version}};
  if (forced) {
    j["forced"] = true;
    j["forced_note"] = forced_note;
  }
  if (!analysis_version.empty()) j["analysis"] = {{"version", analysis_version}, {"sources_sha256", analysis_sha256}};
  return j;
}

FreezeRecord FreezeRecord::from_json(const nlohmann::json& j) {
  FreezeRecord r;
  r.id = j.at("id").get<std::string>();
  r.protocol_sha256 = j.at("protocol_sha256").get<std::string>();
  r.source_revision = j.at("source_revision").get<std::string>();
  r.source_dirty = j.at("source_dirty").get<bool>();
  r.frozen_at = j.at("frozen_at").get<std::string>();
  r.k3lab_version = j.at("k3lab_version").get<std::string>();
  r.forced = j.value("forced", false);
  r.forced_note = j.value("forced_note", "");
  if (j.contains("analysis")) {
    r.analysis_version = j.at("analysis").at("version").get<std::string>();
    r.analysis_sha256 = j.at("analysis").at("sources_sha256").get<std::string>();
  }
  return r;
}

std::filesystem::path freeze_record_path(const Protocol& protocol) {
  return protocol.path.parent_path() / "frozen" / (protocol.id + ".json");
}

std::optional<FreezeRecord> read_freeze_record(const Protocol& protocol) {
  const auto path = freeze_record_path(protocol);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return FreezeRecord::from_json(parse_json_bounded(read_bounded_text(path, "freeze record", kFreezeRecordJsonLimits),
                                                      "the record", kFreezeRecordJsonLimits));
  } catch (const std::exception& e) {
    throw std::runtime_error("freeze record " + path.string() + " is unreadable (" + e.what() +
                             "); restore it from git, or re-freeze with `k3lab freeze " + protocol.id + "`");
  }
}

FreezeRecord freeze(const Protocol& protocol, const FreezeOptions& options) {
  const SourceRevision rev = source_revision(protocol.path.parent_path(), freeze_record_path(protocol).parent_path());
  FreezeRecord r;
  r.id = protocol.id;
  r.protocol_sha256 = protocol.hash();
  r.source_revision = rev.revision;
  r.source_dirty = rev.dirty;
  r.frozen_at = utc_now_iso();
  r.k3lab_version = build::kVersion;
  r.forced = options.forced;
  r.forced_note = options.forced_note;
  r.analysis_version = build::kAnalysisVersion;
  r.analysis_sha256 = build::kAnalysisSha256;
  const auto path = freeze_record_path(protocol);
  std::filesystem::create_directories(path.parent_path());
  write_file_atomically(path, r.to_json().dump(2) + "\n");
  return r;
}

FreezeRecord freeze_analysis(const Protocol& protocol) {
  const FreezeStatus status = check_freeze(protocol);
  if (!status.frozen) throw std::runtime_error(status.explanation);
  FreezeRecord r = *status.record;
  r.analysis_version = build::kAnalysisVersion;
  r.analysis_sha256 = build::kAnalysisSha256;
  write_file_atomically(freeze_record_path(protocol), r.to_json().dump(2) + "\n");
  return r;
}

FreezeStatus check_freeze(const Protocol& protocol) {
  FreezeStatus status;
  status.record = read_freeze_record(protocol);
  if (!status.record) {
    status.explanation = "no freeze record at " + freeze_record_path(protocol).string() +
                         "; freeze the protocol first with `k3lab freeze " + protocol.id +
                         "`, or pass --unfrozen for development (every record is then marked NOT FROZEN)";
    return status;
  }
  const std::string now = protocol.hash();
  if (status.record->protocol_sha256 != now) {
    status.explanation = protocol.path.string() + " was edited after it was frozen (frozen hash " +
                         status.record->protocol_sha256.substr(0, 12) + " at " + status.record->frozen_at +
                         ", now " + now.substr(0, 12) +
                         "); restore the frozen text (git diff shows the edit), or, if no result exists yet and the "
                         "change is intended, re-freeze with `k3lab freeze " + protocol.id + "`";
    return status;
  }
  status.frozen = true;
  return status;
}

std::vector<std::filesystem::path> runs_blocking_refreeze(const Protocol& protocol,
                                                          const std::filesystem::path& runs_root) {
  const auto previous = read_freeze_record(protocol);
  const std::string now = protocol.hash();
  if (previous && previous->protocol_sha256 == now) return {};
  std::vector<std::filesystem::path> blocking;
  for (const auto& run : list_run_dirs(runs_root, protocol.id)) {
    const std::string design = run.manifest.at("protocol_sha256").get<std::string>();
    const bool of_frozen_design =
        previous ? design == previous->protocol_sha256 : (design != now && run.manifest.at("frozen").get<bool>());
    if (of_frozen_design && !finished_units(read_ledger(run.path)).empty()) blocking.push_back(run.path);
  }
  return blocking;
}

}  // namespace k3lab::core
