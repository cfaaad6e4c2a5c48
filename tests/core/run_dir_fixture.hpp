#pragma once
// Run dirs made by hand for the core tests: a complete manifest for a protocol document, and a run dir
// holding given ledger records (written with core's writer, so seq and t are real).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::testing {

// A plan of two units and a result of the first: the smallest ledger a reader must handle.
inline const nlohmann::json kPlan = {{"kind", "plan"}, {"units", {"u1", "u2"}}};
inline const nlohmann::json kResult = {{"kind", "result"}, {"unit", "u1"}, {"data", 1}};

// The fields the runner writes, with values that a reader can check.
inline nlohmann::json complete_manifest(const nlohmann::json& protocol, const std::string& profile,
                                        std::size_t units_planned, bool frozen = false) {
  const std::string protocol_hash = core::sha256_hex(protocol.dump());
  nlohmann::json manifest = {{"experiment", protocol.at("id")},
                             {"title", protocol.at("title")},
                             {"evidence_class", protocol.at("evidence_class")},
                             {"profile", profile},
                             {"protocol_sha256", protocol_hash},
                             {"design_sha256", core::sha256_hex(protocol_hash + "\n" + profile)},
                             {"frozen", frozen},
                             {"unfrozen", !frozen},
                             {"freeze_record", nullptr},
                             {"set_overrides", nlohmann::json::array()},
                             {"protocol", protocol},
                             {"parameters", protocol.at("parameters")},
                             {"units_planned", units_planned},
                             {"labels", nlohmann::json::array()},
                             {"options", nlohmann::json::object()},
                             {"provenance", nlohmann::json::object()}};
  if (frozen) {
    manifest["freeze_record"] = {{"protocol_sha256", protocol_hash}, {"frozen_at", "2020-01-01T00:00:00.000Z"}};
  }
  return manifest;
}

// A run dir of the protocol's experiment under runs_root holding `records` in ledger.jsonl.
inline std::filesystem::path make_run(const std::filesystem::path& runs_root, const nlohmann::json& manifest,
                                      const std::vector<nlohmann::json>& records) {
  const auto run = core::create_run_dir(runs_root, manifest.at("experiment").get<std::string>(), manifest);
  core::LedgerWriter writer(run.path);
  for (const auto& record : records) writer.append(record);
  return run.path;
}

}  // namespace k3lab::testing
