#pragma once
// Where a unit's trace comes from. The retained trace of a mix is a committed .k3tr file: it is
// loaded, its SHA-256 must equal the protocol's, its header must carry the protocol's generator
// seed, and it is regenerated from that seed to record whether the generator still reproduces it
// (the file, not the generator, is what the run uses). Seeded traces are generated on the fly and
// hashed the same way.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/trace.hpp"

namespace k3lab::sim {

struct UnitTrace {
  Trace trace;
  std::string origin;               // "fixture" or "generated"
  std::string file;                 // fixture path as given in the protocol
  std::string sha256;               // of the trace the unit runs
  std::string regenerated_sha256;   // retained only: the generator's output for the same seed
  bool regenerated_matches = true;
};

// The retained file's bytes do not hash to the protocol's value: the unit must not run on it.
class TraceHashMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Relative fixture paths are taken from `repo_root`.
std::filesystem::path resolve_fixture(const std::string& file, const std::filesystem::path& repo_root);

UnitTrace load_retained_trace(const SimParameters& params, std::size_t mix_index,
                              const std::filesystem::path& repo_root, bool regenerate_check = true);
UnitTrace make_seeded_trace(const SimParameters& params, std::size_t mix_index, std::size_t trace_index);

// Writes every mix's retained trace under `repo_root` at the protocol's file paths and returns the
// retained_traces JSON (mix, file, sha256, generator_seed) to put into the protocol.
nlohmann::json write_retained_traces(const SimParameters& params, const std::filesystem::path& repo_root);

}  // namespace k3lab::sim
