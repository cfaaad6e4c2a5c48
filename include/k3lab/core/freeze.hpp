#pragma once
// Freeze records (experiments/frozen/<id>.json): the protocol hash and source revision recorded
// before execution. `run` compares the protocol with its record and refuses any difference.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"

namespace k3lab::core {

struct FreezeRecord {
  std::string id;
  std::string protocol_sha256;
  std::string source_revision;
  bool source_dirty = false;
  std::string frozen_at;
  std::string k3lab_version;
  // Set by `freeze --force` over results of the previous design; written only when true, so records
  // frozen the ordinary way keep their bytes.
  bool forced = false;
  std::string forced_note;  // which run dirs held results of which design
  // The analysis (report and decision code) frozen with the protocol: its version and sources' sha256
  // (cmake/AnalysisInfo.cmake). Empty in records written before analyses were frozen; written only when set.
  std::string analysis_version;
  std::string analysis_sha256;

  nlohmann::json to_json() const;
  static FreezeRecord from_json(const nlohmann::json& j);
};

// Records the analysis of this build in the protocol's existing freeze record (the protocol's own
// fields untouched). Throws when the protocol has no freeze record or was edited after it was frozen.
FreezeRecord freeze_analysis(const Protocol& protocol);

std::filesystem::path freeze_record_path(const Protocol& protocol);

std::optional<FreezeRecord> read_freeze_record(const Protocol& protocol);

struct FreezeOptions {
  bool forced = false;      // re-freezing over results of the previous design (`freeze --force`)
  std::string forced_note;  // recorded with it
};

// Writes the record; returns it.
FreezeRecord freeze(const Protocol& protocol, const FreezeOptions& options = {});

// The run dirs under runs_root that hold terminal records of the design frozen now, while `protocol`
// differs from it: re-freezing would leave those results without their freeze record. With no freeze
// record, the run dirs holding frozen results of any other design. Empty when re-freezing is safe.
// A damaged run dir of the experiment throws DamagedRunDir (it may hold such results).
std::vector<std::filesystem::path> runs_blocking_refreeze(const Protocol& protocol,
                                                          const std::filesystem::path& runs_root);

struct FreezeStatus {
  bool frozen = false;        // a record exists and matches
  std::string explanation;    // why not, with what to do
  std::optional<FreezeRecord> record;
};

FreezeStatus check_freeze(const Protocol& protocol);

}  // namespace k3lab::core
