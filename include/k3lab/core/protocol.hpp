#pragma once
// Protocol files (experiments/<id>.json): the frozen design of one experiment, as data.
// Common fields are validated here; the experiment-specific `parameters` block is validated against
// the schema its experiment module declares, after the chosen profile's overrides are merged in.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::core {

const std::vector<std::string>& evidence_classes();
const std::vector<std::string>& profile_names();

struct Arm {
  std::string id;
  std::string description;
  bool requested_by_seed = true;  // false: a reference arm k3lab adds beyond the seed's request
};

struct Protocol {
  std::filesystem::path path;
  nlohmann::json document;  // the file as parsed
  std::string id;
  std::string title;
  std::string evidence_class;
  std::vector<Arm> arms;
  std::vector<std::string> can_say;
  std::vector<std::string> cannot_say;

  // Canonical form: sorted keys, no whitespace. Its SHA-256 is the protocol hash.
  std::string canonical() const;
  std::string hash() const;

  // `parameters` with the named profile's overrides merged (RFC 7386 merge patch).
  nlohmann::json parameters_for(const std::string& profile) const;
};

class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(const std::filesystem::path& file, std::vector<SchemaIssue> issues);
  const std::vector<SchemaIssue>& issues() const { return issues_; }

 private:
  std::vector<SchemaIssue> issues_;
};

// The schema of the common (experiment-independent) fields.
const Schema& protocol_schema();

// Whether a protocol file must be named after its id (experiments/<id>.json), as every file the commands
// find by id is; `validate --experiment` checks drafts of any name.
enum class FileNaming { MustMatchId, Any };

// Parses and validates a protocol file; `parameter_schema` (may be null) checks `parameters` under
// every profile. Throws ProtocolError listing every problem with file and field.
Protocol load_protocol(const std::filesystem::path& file, const Schema* parameter_schema,
                       FileNaming naming = FileNaming::MustMatchId);

// Where protocol files live: $K3LAB_PROTOCOL_DIR, else ./experiments, else the source tree's.
std::filesystem::path protocol_dir();
std::filesystem::path protocol_path(const std::string& id);

}  // namespace k3lab::core

namespace k3lab::core {
// Rebuilds a Protocol from a document recorded in a manifest (reports never read protocol files).
Protocol protocol_from_document(const nlohmann::json& document, const std::filesystem::path& origin);
}  // namespace k3lab::core
