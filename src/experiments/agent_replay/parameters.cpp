#include "agent_replay/parameters.hpp"

#include <memory>
#include <stdexcept>

#include "k3lab/validate/agent_tasks.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

const std::vector<std::string> kEfforts = {"low", "high", "max"};

std::shared_ptr<core::Schema> effort_change_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("from_turn", "model turn (1-based) from which the changed effort is sent").at_least(2);
  s->string("to_effort", "the reasoning effort sent from that turn on; must differ from reasoning_effort")
      .one_of(kEfforts);
  return s;
}

std::shared_ptr<core::Schema> omitted_result_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("position", "which result of the first turn with two tool calls is left out").one_of({"first", "second"});
  return s;
}

std::shared_ptr<core::Schema> truncated_completion_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("turn", "model turn whose completion is cut (finish_reason length) and replayed as returned")
      .at_least(1);
  s->integer("max_completion_tokens", "output cap of that one turn; below parameters.max_completion_tokens")
      .at_least(1);
  return s;
}

std::shared_ptr<core::Schema> reordered_tools_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("from_turn", "model turn from which the dynamic tool declaration is sent in a different order")
      .at_least(2);
  return s;
}

std::shared_ptr<core::Schema> faults_schema() {
  auto s = std::make_shared<core::Schema>();
  s->object("effort_change", effort_change_schema(), "arm effort-change: change reasoning effort midway");
  s->object("omitted_tool_result", omitted_result_schema(), "arm omitted-tool-result: omit one of two tool results");
  s->object("truncated_completion", truncated_completion_schema(), "arm truncated-completion: truncate the completion");
  s->object("reordered_tools", reordered_tools_schema(), "arm reordered-tools: reorder a dynamic tool declaration");
  return s;
}

std::shared_ptr<core::Schema> analysis_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("bootstrap_resamples", "resamples of the paired-by-task bootstrap of each fault-minus-control difference")
      .at_least(100);
  s->integer("bootstrap_seed", "seed of the bootstrap draws").at_least(0);
  s->number("confidence", "two-sided confidence of the bootstrap interval").above(0).at_most(0.999);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.string("model", "hosted model id; fixed for the test window");
  s.string("reasoning_effort", "reasoning effort of every call (changed only in arm effort-change)").one_of(kEfforts);
  s.integer("max_completion_tokens", "output limit of every call").at_least(1).at_most(131072);
  s.integer("task_count", "frozen agent tasks (deterministic local tools, hidden validators), in a fixed order")
      .at_least(1)
      .at_most(validate::kAgentTaskCount);
  s.integer("repetitions", "repetitions of every task in every arm").at_least(1);
  s.integer("max_model_turns", "a run stops after this many model turns or one validated terminal answer")
      .at_least(1);
  s.number("test_window_hours", "every run of the matrix happens inside one window of this length").above(0);
  s.integer("transport_retries", "retries of a platform transport failure, resumed from the retained operation record")
      .at_least(0)
      .at_most(2);
  s.object(api::kTransportSection, api::transport_schema(),
           "timeouts and client-side rate limits of every send (api/transport_options.hpp); absent: the defaults")
      .optional();
  s.number("invalid_fraction_limit_per_arm", "if one arm exceeds this fraction of invalid runs, invalidate the window")
      .at_least(0)
      .at_most(1);
  s.object("faults", faults_schema(), "the one fault each intervention arm injects");
  s.object("analysis", analysis_schema(), "predeclared analysis settings");
  s.object("pricing", api::price_table_schema("cost per completed task"), "prices for cost per completed task");
  return s;
}

}  // namespace

const core::Schema& parameter_schema() {
  static const core::Schema schema = make_schema();
  return schema;
}

Parameters parse_parameters(const nlohmann::json& j) {
  auto issues = parameter_schema().validate(j, "parameters");
  if (issues.empty()) {
    const int turns = j.at("max_model_turns").get<int>();
    const auto& f = j.at("faults");
    auto within_turns = [&](const std::string& path, int turn) {
      if (turn > turns) {
        issues.push_back({path, "turn " + std::to_string(turn) + " is after the last model turn (max_model_turns " +
                                    std::to_string(turns) + "); the fault could never happen"});
      }
    };
    within_turns("parameters.faults.effort_change.from_turn", f["effort_change"]["from_turn"].get<int>());
    within_turns("parameters.faults.truncated_completion.turn", f["truncated_completion"]["turn"].get<int>());
    within_turns("parameters.faults.reordered_tools.from_turn", f["reordered_tools"]["from_turn"].get<int>());
    if (f["effort_change"]["to_effort"] == j.at("reasoning_effort")) {
      issues.push_back({"parameters.faults.effort_change.to_effort",
                        "equals reasoning_effort, so the arm would change nothing; choose a different effort"});
    }
    if (f["truncated_completion"]["max_completion_tokens"].get<std::int64_t>() >=
        j.at("max_completion_tokens").get<std::int64_t>()) {
      issues.push_back({"parameters.faults.truncated_completion.max_completion_tokens",
                        "must be below parameters.max_completion_tokens, or nothing is truncated"});
    }
    if (auto issue = api::price_table_model_issue(j)) issues.push_back(*issue);
  }
  core::throw_schema_issues("agent-replay parameters are invalid:", issues);
  Parameters p;
  p.model = j.at("model").get<std::string>();
  p.reasoning_effort = j.at("reasoning_effort").get<std::string>();
  p.max_completion_tokens = j.at("max_completion_tokens").get<std::int64_t>();
  p.task_count = j.at("task_count").get<int>();
  p.repetitions = j.at("repetitions").get<int>();
  p.max_model_turns = j.at("max_model_turns").get<int>();
  p.test_window_hours = j.at("test_window_hours").get<double>();
  p.transport_retries = j.at("transport_retries").get<int>();
  p.transport = api::protocol_transport(j);
  p.invalid_fraction_limit_per_arm = j.at("invalid_fraction_limit_per_arm").get<double>();
  const auto& f = j.at("faults");
  p.faults.effort_change_from_turn = f.at("effort_change").at("from_turn").get<int>();
  p.faults.effort_change_to = f.at("effort_change").at("to_effort").get<std::string>();
  p.faults.omitted_result_position = f.at("omitted_tool_result").at("position").get<std::string>();
  p.faults.truncated_completion_turn = f.at("truncated_completion").at("turn").get<int>();
  p.faults.truncated_completion_tokens = f.at("truncated_completion").at("max_completion_tokens").get<std::int64_t>();
  p.faults.reordered_tools_from_turn = f.at("reordered_tools").at("from_turn").get<int>();
  const auto& a = j.at("analysis");
  p.bootstrap_resamples = a.at("bootstrap_resamples").get<int>();
  p.bootstrap_seed = a.at("bootstrap_seed").get<std::uint64_t>();
  p.confidence = a.at("confidence").get<double>();
  p.pricing = api::parse_price_table(j.at("pricing"));
  return p;
}

}  // namespace k3lab::experiments::agent_replay
