// Stage one of a run: the protocol, its freeze, --set overrides and the preflight, resolved into the
// design a run dir is bound to (runner_stages.hpp).
#include <stdexcept>

#include "k3lab/core/schema.hpp"
#include "k3lab/core/set_value.hpp"
#include "k3lab/core/sha256.hpp"
#include "runner_stages.hpp"

namespace k3lab::experiments {
namespace {

// The node a dotted key names in `parameters`; the error lists what exists there.
nlohmann::json& override_target(nlohmann::json& parameters, const std::string& key) {
  nlohmann::json* node = &parameters;
  std::size_t start = 0;
  std::string walked;
  for (;;) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) {
      std::vector<std::string> candidates;
      if (node->is_object()) {
        for (auto it = node->begin(); it != node->end(); ++it) candidates.push_back(it.key());
      }
      std::string message = "--set " + key + ": no parameter \"" + part + "\"" +
                            (walked.empty() ? "" : " under \"" + walked + "\"");
      if (auto guess = core::did_you_mean(part, candidates)) message += "; did you mean \"" + *guess + "\"?";
      throw std::invalid_argument(message + " (`k3lab plan <id> --json` lists the parameters)");
    }
    node = &(*node)[part];
    walked += (walked.empty() ? "" : ".") + part;
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

}  // namespace

void apply_overrides(nlohmann::json& parameters, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("--set expects key=value (e.g. --set traces_per_mix=2), got \"" + item + "\"");
    }
    override_target(parameters, item.substr(0, eq)) = core::parse_set_value(item.substr(eq + 1));
  }
}

std::string design_hash(const std::string& protocol_hash, const nlohmann::json& parameters) {
  return core::sha256_hex(protocol_hash + "\n" + parameters.dump());
}

namespace stages {

RunSummary refusal(int code, std::string message) {
  RunSummary s;
  s.exit_code = code;
  s.message = std::move(message);
  return s;
}

void count_terminal(const std::vector<nlohmann::json>& terminal, RunSummary& summary) {
  summary.results = summary.invalid = summary.failures = 0;
  for (const auto& r : terminal) {
    const auto kind = r.value("kind", "");
    if (kind == "result") ++summary.results;
    else if (kind == "invalid") ++summary.invalid;
    else ++summary.failures;
  }
}

std::variant<Design, RunSummary> resolve_design(Experiment& experiment, const RunRequest& request) {
  Design d{load_checked_protocol(experiment, request.protocol_file.value_or(core::protocol_path(request.experiment_id))),
           {}, true, {}, {}, {}, {}};
  if (d.protocol.id != experiment.id()) {
    return refusal(kExitProtocol, d.protocol.path.string() + " declares id \"" + d.protocol.id + "\" but is run as " +
                                      experiment.id() + ": fix the file's id field");
  }
  d.freeze = core::check_freeze(d.protocol);
  if (!d.freeze.frozen && !request.unfrozen) return refusal(kExitProtocol, "refusing to run: " + d.freeze.explanation);
  d.frozen = d.freeze.frozen && !request.unfrozen && request.set_overrides.empty();

  d.parameters = d.protocol.parameters_for(request.profile);
  if (!request.set_overrides.empty()) {
    if (!request.unfrozen) {
      return refusal(kExitProtocol, "--set changes the frozen design; add --unfrozen to run a development variant "
                                    "(every record and report page is then marked NOT FROZEN)");
    }
    apply_overrides(d.parameters, request.set_overrides);
    auto issues = experiment.parameter_schema().validate(d.parameters, "parameters");
    if (!issues.empty()) return refusal(kExitUsage, core::schema_issues_message("--set produced invalid parameters:", issues));
  }
  d.hash = design_hash(d.protocol.hash(), d.parameters);
  d.units = experiment.enumerate(d.protocol, d.parameters);
  d.labels = experiment.run_labels(request.options);
  if (!request.plan_only) {
    if (const auto problem = experiment.preflight(d.parameters, request.options)) {
      return refusal(kExitError, "cannot start: " + *problem + "; nothing was recorded");
    }
  }
  return d;
}

}  // namespace stages
}  // namespace k3lab::experiments
