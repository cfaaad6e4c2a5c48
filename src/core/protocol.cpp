#include "k3lab/core/protocol.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "k3lab/build_info.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {

const std::vector<std::string>& evidence_classes() {
  static const std::vector<std::string> classes = {"direct-api", "proxy-ablation", "systems-simulation"};
  return classes;
}

const std::vector<std::string>& profile_names() {
  static const std::vector<std::string> names = {"full", "smoke"};
  return names;
}

namespace {

std::shared_ptr<Schema> arm_schema() {
  auto s = std::make_shared<Schema>();
  s->string("id", "stable arm id used in unit ids and reports");
  s->string("description", "what this arm changes");
  s->boolean("requested_by_seed", "true when the seed protocol asks for this arm; false for a reference arm k3lab adds");
  return s;
}

std::shared_ptr<Schema> metric_schema() {
  auto s = std::make_shared<Schema>();
  s->string("name", "metric name as reported");
  s->string("description", "how it is measured");
  return s;
}

std::shared_ptr<Schema> profiles_schema() {
  auto s = std::make_shared<Schema>();
  s->any_object("full", "overrides for the seed's protocol exactly (usually empty)");
  s->any_object("smoke", "overrides that shrink sizes for CI, same code path");
  return s;
}

std::shared_ptr<Schema> controls_schema() {
  auto s = std::make_shared<Schema>();
  s->string("mixed_hardware",
            "whether a decision may read units that ran on different hardware fingerprints (absent: excluded)")
      .one_of({"allowed", "excluded"})
      .optional();
  return s;
}

Schema make_protocol_schema() {
  Schema s;
  s.string("id", "experiment id (a registered module's id; the file is experiments/<id>.json)");
  s.string("title", "the seed's experiment title");
  s.integer("version", "the protocol's version, raised when a frozen protocol is redesigned (absent: 1); "
                       "results keep the version they ran under").optional().at_least(1);
  s.string("seed_section", "the section of the seed text this protocol freezes");
  s.string("evidence_class", "what kind of evidence a result is").one_of(evidence_classes());
  s.string("hypothesis", "the seed's hypothesis, verbatim in substance");
  s.array_of_objects("arms", arm_schema(), "the compared arms").non_empty();
  s.array_of("controlled_variables", FieldType::String, "what is held fixed").non_empty();
  s.array_of_objects("metrics", metric_schema(), "primary metrics").non_empty();
  s.string("evaluation_cadence", "when measurements are taken");
  s.string("stopping_rule", "when every unit stops");
  s.string("invalid_run_rule", "what makes a unit or window invalid, and what follows");
  s.string("decision_rule", "what result counts as support for the hypothesis");
  s.array_of("can_say", FieldType::String, "what a result can claim").non_empty();
  s.array_of("cannot_say", FieldType::String, "what a result cannot claim (the transfer limit)").non_empty();
  s.any_object("parameters", "experiment-specific sizes, seeds and budgets (the full profile's values)");
  s.object("profiles", profiles_schema(), "profile overrides merged into parameters");
  s.object("controls", controls_schema(), "how controlled variables are enforced (docs/verdicts.md, \"Hardware\")")
      .optional();
  return s;
}

std::string format_issues(const std::filesystem::path& file, const std::vector<SchemaIssue>& issues) {
  std::ostringstream out;
  out << file.string() << ": " << issues.size() << " problem(s)";
  for (const auto& issue : issues) out << "\n  " << issue.path << ": " << issue.message;
  return out.str();
}

}  // namespace

ProtocolError::ProtocolError(const std::filesystem::path& file, std::vector<SchemaIssue> issues)
    : std::runtime_error(format_issues(file, issues)), issues_(std::move(issues)) {}

const Schema& protocol_schema() {
  static const Schema schema = make_protocol_schema();
  return schema;
}

std::string Protocol::canonical() const { return document.dump(); }

std::string Protocol::hash() const { return sha256_hex(canonical()); }

nlohmann::json Protocol::parameters_for(const std::string& profile) const {
  nlohmann::json params = document.at("parameters");
  const auto& profiles = document.at("profiles");
  if (!profiles.contains(profile)) {
    std::string known;
    for (auto it = profiles.begin(); it != profiles.end(); ++it) known += (known.empty() ? "" : ", ") + it.key();
    throw std::invalid_argument("unknown profile \"" + profile + "\" for " + id + "; choose one of: " + known);
  }
  params.merge_patch(profiles.at(profile));
  return params;
}

Protocol load_protocol(const std::filesystem::path& file, const Schema* parameter_schema, FileNaming naming) {
  Protocol p;
  p.path = file;
  try {
    p.document = parse_json_bounded(read_bounded_text(file, "protocol file", kProtocolJsonLimits), "the file",
                                    kProtocolJsonLimits);
  } catch (const JsonInputError& e) {
    throw ProtocolError(file, {{"(syntax)", e.what()}});
  }
  auto issues = protocol_schema().validate(p.document);
  if (!issues.empty()) throw ProtocolError(file, issues);

  p.id = p.document.at("id").get<std::string>();
  const std::string stem = file.stem().string();
  if (naming == FileNaming::MustMatchId && stem != p.id) {
    throw ProtocolError(file, {{"id", "is \"" + p.id + "\" but the file is named " + file.filename().string() +
                                          "; rename the file to " + p.id + ".json or fix the id"}});
  }
  p.title = p.document.at("title").get<std::string>();
  p.evidence_class = p.document.at("evidence_class").get<std::string>();
  for (const auto& arm : p.document.at("arms")) {
    p.arms.push_back({arm.at("id").get<std::string>(), arm.at("description").get<std::string>(),
                      arm.at("requested_by_seed").get<bool>()});
  }
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < p.arms.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), p.arms[i].id) != seen.end()) {
      issues.push_back({"arms[" + std::to_string(i) + "].id", "duplicate arm id \"" + p.arms[i].id + "\""});
    }
    seen.push_back(p.arms[i].id);
  }
  p.can_say = p.document.at("can_say").get<std::vector<std::string>>();
  p.cannot_say = p.document.at("cannot_say").get<std::vector<std::string>>();

  if (parameter_schema) {
    for (const auto& profile : profile_names()) {
      auto params = p.parameters_for(profile);
      for (auto& issue : parameter_schema->validate(params, "parameters")) {
        issue.path = "profiles." + profile + " -> " + issue.path;
        issues.push_back(std::move(issue));
      }
    }
  }
  if (!issues.empty()) throw ProtocolError(file, issues);
  return p;
}

std::filesystem::path protocol_dir() {
  if (const char* env = std::getenv("K3LAB_PROTOCOL_DIR"); env && *env) return env;
  if (std::filesystem::is_directory("experiments") && std::filesystem::exists("experiments/memory-pool.json")) {
    return std::filesystem::absolute("experiments");
  }
  return std::filesystem::path(build::kSourceDir) / "experiments";
}

std::filesystem::path protocol_path(const std::string& id) { return protocol_dir() / (id + ".json"); }

}  // namespace k3lab::core

namespace k3lab::core {
Protocol protocol_from_document(const nlohmann::json& document, const std::filesystem::path& origin) {
  auto issues = protocol_schema().validate(document);
  if (!issues.empty()) throw ProtocolError(origin, issues);
  Protocol p;
  p.path = origin;
  p.document = document;
  p.id = document.at("id").get<std::string>();
  p.title = document.at("title").get<std::string>();
  p.evidence_class = document.at("evidence_class").get<std::string>();
  for (const auto& arm : document.at("arms")) {
    p.arms.push_back({arm.at("id").get<std::string>(), arm.at("description").get<std::string>(),
                      arm.at("requested_by_seed").get<bool>()});
  }
  p.can_say = document.at("can_say").get<std::vector<std::string>>();
  p.cannot_say = document.at("cannot_say").get<std::vector<std::string>>();
  return p;
}
}  // namespace k3lab::core
