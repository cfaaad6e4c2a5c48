#pragma once
// The parameters block of experiments/agent-replay.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/price_table.hpp"
#include "k3lab/api/transport_options.hpp"
#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::agent_replay {

struct Faults {
  int effort_change_from_turn = 0;        // model turn (1-based) from which the changed effort is sent
  std::string effort_change_to;           // the effort sent from that turn on
  std::string omitted_result_position;    // which of the two tool results is left out: first | second
  int truncated_completion_turn = 0;      // model turn whose completion is cut by a low output cap
  std::int64_t truncated_completion_tokens = 0;
  int reordered_tools_from_turn = 0;      // model turn from which the dynamic tool declaration is reordered
};

struct Parameters {
  std::string model;
  std::string reasoning_effort;
  std::int64_t max_completion_tokens = 0;
  int task_count = 0;
  int repetitions = 0;
  int max_model_turns = 0;
  double test_window_hours = 0;
  int transport_retries = 0;
  api::TransportSettings transport;  // parameters.transport, defaults filled in
  double invalid_fraction_limit_per_arm = 0;
  Faults faults;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;
  double confidence = 0;
  api::PriceTable pricing;
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts; throws std::invalid_argument naming fields.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::agent_replay
