#pragma once
// The parameters block of experiments/context-probe.json: its declared schema and a typed view.
// Schema checks types and bounds; parse_parameters adds the cross-field rules (ordered budgets that
// leave room for a prompt, unique seeds, a price table for the same model).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/price_table.hpp"
#include "k3lab/api/transport_options.hpp"
#include "k3lab/core/schema.hpp"
#include "k3lab/validate/repo_snapshot.hpp"

namespace k3lab::experiments::context_probe {

struct Parameters {
  std::string model;
  std::string reasoning_effort;
  std::int64_t max_completion_tokens = 0;
  std::int64_t framing_reserve_tokens = 0;
  std::vector<std::string> families;
  std::vector<std::uint64_t> fixture_seeds;
  std::vector<std::int64_t> lengths;  // total request budgets (prompt + framing + completion)
  int repetitions = 0;
  std::uint64_t order_seed = 0;
  double test_window_hours = 0;
  double invalid_fraction_limit = 0;
  double decision_confidence = 0;
  int transport_retries = 0;
  api::TransportSettings transport;  // parameters.transport, defaults filled in
  api::PriceTable pricing;
  std::string tokenizer_vocab;  // optional; empty: the conservative estimate (prompt_tokens.hpp)
  validate::RepositoryPin repository;  // the repository family's pinned real repository

  // The most prompt tokens (fixture, framing, question) a request at this budget may carry.
  std::int64_t max_prompt_tokens(std::int64_t length) const { return length - max_completion_tokens; }
  // The fixture text the generator aims for, leaving the framing reserve for messages and question.
  std::int64_t haystack_tokens(std::int64_t length) const {
    return length - max_completion_tokens - framing_reserve_tokens;
  }
};

// The fixture families the seed names, in its order.
const std::vector<std::string>& known_families();

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts. Throws std::invalid_argument listing
// every problem with its field path.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::context_probe
