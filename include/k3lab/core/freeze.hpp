#pragma once
// Freeze records (experiments/frozen/<id>.json): the protocol hash and source revision recorded
// before execution. `run` compares the protocol with its record and refuses any difference.
#include <filesystem>
#include <optional>
#include <string>

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

  nlohmann::json to_json() const;
  static FreezeRecord from_json(const nlohmann::json& j);
};

std::filesystem::path freeze_record_path(const Protocol& protocol);

std::optional<FreezeRecord> read_freeze_record(const Protocol& protocol);

// Writes the record; returns it.
FreezeRecord freeze(const Protocol& protocol);

struct FreezeStatus {
  bool frozen = false;        // a record exists and matches
  std::string explanation;    // why not, with what to do
  std::optional<FreezeRecord> record;
};

FreezeStatus check_freeze(const Protocol& protocol);

}  // namespace k3lab::core
