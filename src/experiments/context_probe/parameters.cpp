#include "context_probe/parameters.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::context_probe {
namespace {

// The largest total request budget the seed tests: the configured 1,048,576-token context.
constexpr double kContextLimit = 1048576;
// The Kimi K3 output cap (api.md section 1.1: 128K max output).
constexpr double kMaxCompletion = 131072;
// Fixture i of a family uses placement index i-1 of the evidence-placement rule (validate), which has 8.
constexpr std::size_t kFixturesPerFamily = 8;

std::shared_ptr<core::Schema> repository_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("package", "the Debian package whose Python files are the repository family's snapshot");
  s->string("version", "its Debian version; another installed version is refused before any call");
  s->string("upstream", "the upstream release and tag the package ships");
  s->string("upstream_commit", "the upstream commit, when the package records one").optional();
  s->string("license", "SPDX id of the files' license (permissive only)");
  s->string("license_file", "the package's copyright file, which states that license");
  s->string("root", "the folder the listed paths are relative to");
  s->string("files", "the list of pinned files and their SHA-256 (sha256sum format), relative to the protocol folder");
  s->string("files_sha256", "SHA-256 of that list");
  s->integer("file_count", "number of files in the list").at_least(1);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.string("model", "hosted model id sent as `model`; fixed for the whole test window");
  s.string("reasoning_effort", "K3 `reasoning_effort`, fixed for every call").one_of({"low", "high", "max"});
  s.integer("max_completion_tokens", "`max_completion_tokens` of every call (the output limit)")
      .at_least(1)
      .at_most(kMaxCompletion);
  s.integer("framing_reserve_tokens",
            "tokens the fixture generator leaves for message framing and the question inside the prompt budget")
      .at_least(0);
  s.array_of("families", core::FieldType::String, "fixture families, one generator and validator each")
      .one_of(known_families())
      .non_empty();
  s.array_of("fixture_seeds", core::FieldType::Integer,
             "generator seed of fixture 1..n; the same seeds are used in every family (published with results)")
      .at_least(0)
      .non_empty();
  s.array_of("lengths", core::FieldType::Integer,
             "total request budgets in tokens (prompt + framing + max_completion_tokens), ascending")
      .at_least(1)
      .at_most(kContextLimit)
      .non_empty();
  s.integer("repetitions", "repetitions of every cell in each cache stratum").at_least(1);
  s.integer("order_seed", "seeds the shuffle of call blocks within each repetition (time-drift control)").at_least(0);
  s.number("test_window_hours", "every call of the matrix runs inside one window of this length").above(0);
  s.number("invalid_fraction_limit", "stop the window when more than this fraction of scored cells is invalid")
      .at_least(0)
      .at_most(1);
  s.number("decision_confidence", "confidence of the Wilson intervals in the decision rule").above(0).at_most(0.999);
  s.integer("transport_retries", "retries of a transport failure with the same request (the seed allows 2)")
      .at_least(0)
      .at_most(2);
  s.object(api::kTransportSection, api::transport_schema(),
           "timeouts and client-side rate limits of every send (api/transport_options.hpp); absent: the defaults")
      .optional();
  s.object("pricing", api::price_table_schema("`plan`'s cost estimate and the cost-per-success metric"),
           "prices for the cost estimate and the cost-per-success metric");
  s.object("repository", repository_schema(),
           "the pinned real repository the repository family's questions are derived from (docs/context-probe.md)");
  s.string("tokenizer_vocab",
           "tiktoken-format vocabulary file (Kimi's tiktoken.model) for exact prompt sizes and budget checks; "
           "absent: the conservative 3-bytes-per-token estimate")
      .optional();
  return s;
}

}  // namespace

const std::vector<std::string>& known_families() {
  static const std::vector<std::string> families = {"single", "distractor", "multi-hop", "order-state", "repository"};
  return families;
}

const core::Schema& parameter_schema() {
  static const core::Schema schema = make_schema();
  return schema;
}

Parameters parse_parameters(const nlohmann::json& j) {
  auto issues = parameter_schema().validate(j, "parameters");
  if (issues.empty()) {
    const auto families = j.at("families").get<std::vector<std::string>>();
    if (std::set<std::string>(families.begin(), families.end()).size() != families.size()) {
      issues.push_back({"parameters.families", "lists a family twice; list each family once"});
    }
    const auto seeds = j.at("fixture_seeds").get<std::vector<std::uint64_t>>();
    if (std::set<std::uint64_t>(seeds.begin(), seeds.end()).size() != seeds.size()) {
      issues.push_back({"parameters.fixture_seeds", "repeats a seed; every fixture needs its own seed"});
    }
    if (seeds.size() > kFixturesPerFamily) {
      issues.push_back({"parameters.fixture_seeds", "lists " + std::to_string(seeds.size()) +
                                                        " seeds but each family has " +
                                                        std::to_string(kFixturesPerFamily) +
                                                        " evidence placements (fixtures 1..8); list at most 8"});
    }
    const auto lengths = j.at("lengths").get<std::vector<std::int64_t>>();
    const auto completion = j.at("max_completion_tokens").get<std::int64_t>();
    const auto reserve = j.at("framing_reserve_tokens").get<std::int64_t>();
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      const std::string path = "parameters.lengths[" + std::to_string(i) + "]";
      if (i > 0 && lengths[i] <= lengths[i - 1]) {
        issues.push_back({path, "budgets must be strictly ascending; got " + std::to_string(lengths[i]) +
                                    " after " + std::to_string(lengths[i - 1])});
      }
      if (lengths[i] <= completion + reserve) {
        issues.push_back({path, "budget " + std::to_string(lengths[i]) +
                                    " leaves no room for fixture text after max_completion_tokens (" +
                                    std::to_string(completion) + ") and framing_reserve_tokens (" +
                                    std::to_string(reserve) + "); raise the budget or lower those"});
      }
    }
    try {
      validate::RepositoryPin::from_json(j.at("repository"));
    } catch (const std::invalid_argument& e) {
      issues.push_back({"parameters.repository", e.what()});
    }
    if (auto issue = api::price_table_model_issue(j)) issues.push_back(*issue);
  }
  core::throw_schema_issues("context-probe parameters are invalid:", issues);
  Parameters p;
  p.model = j.at("model").get<std::string>();
  p.reasoning_effort = j.at("reasoning_effort").get<std::string>();
  p.max_completion_tokens = j.at("max_completion_tokens").get<std::int64_t>();
  p.framing_reserve_tokens = j.at("framing_reserve_tokens").get<std::int64_t>();
  p.families = j.at("families").get<std::vector<std::string>>();
  p.fixture_seeds = j.at("fixture_seeds").get<std::vector<std::uint64_t>>();
  p.lengths = j.at("lengths").get<std::vector<std::int64_t>>();
  p.repetitions = j.at("repetitions").get<int>();
  p.order_seed = j.at("order_seed").get<std::uint64_t>();
  p.test_window_hours = j.at("test_window_hours").get<double>();
  p.invalid_fraction_limit = j.at("invalid_fraction_limit").get<double>();
  p.decision_confidence = j.at("decision_confidence").get<double>();
  p.transport_retries = j.at("transport_retries").get<int>();
  p.transport = api::protocol_transport(j);
  p.tokenizer_vocab = j.value("tokenizer_vocab", std::string());
  p.repository = validate::RepositoryPin::from_json(j.at("repository"));
  p.pricing = api::parse_price_table(j.at("pricing"));
  return p;
}

}  // namespace k3lab::experiments::context_probe
