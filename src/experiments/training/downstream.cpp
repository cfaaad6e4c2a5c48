#include "k3lab/experiments/training/downstream.hpp"

#include <algorithm>
#include <stdexcept>

#include <ATen/Parallel.h>

#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/multiple_choice.hpp"

namespace k3lab::experiments::training {

DownstreamProbe::DownstreamProbe(const DownstreamSuite& spec, LoadedSuite suite, std::int64_t vocab_size,
                                 std::int64_t sequence_length)
    : spec_(spec), suite_(std::move(suite)), vocab_size_(vocab_size), sequence_length_(sequence_length) {}

std::optional<nlohmann::json> DownstreamProbe::evaluate(train::EvalContext& context) const {
  if (std::find(spec_.at_tokens.begin(), spec_.at_tokens.end(), context.tokens) == spec_.at_tokens.end()) {
    return std::nullopt;
  }
  train::MultipleChoiceOptions options;
  options.vocab_size = vocab_size_;
  options.max_length = sequence_length_;
  options.batch_rows = spec_.batch_rows;
  options.device = context.device;
  options.threads = at::get_num_threads();  // the decoder's forward is reentrant: batches side by side
  auto& model = context.model;
  const auto result = train::score_multiple_choice(
      [&model](const torch::Tensor& tokens) { return model->forward(tokens); }, suite_.items, options);
  auto record = result.to_json();
  record["tokens"] = context.tokens;
  return record;
}

std::optional<UnitOutcome> load_unit_downstream(const DownstreamBlock& block, std::int64_t vocab_size,
                                                std::int64_t sequence_length, const nlohmann::json& options,
                                                std::optional<DownstreamProbe>& probe, const nlohmann::json& data) {
  if (!block.downstream) return std::nullopt;
  try {
    probe.emplace(*block.downstream, load_downstream_suite(*block.downstream, vocab_size, train::data_root_from(options)),
                  vocab_size, sequence_length);
  } catch (const std::exception& e) {
    return UnitOutcome::failure(kDataUnavailable, e.what(), data);
  }
  return std::nullopt;
}

std::function<nlohmann::json(train::EvalContext&)> with_downstream(
    std::function<nlohmann::json(train::EvalContext&)> probes, const std::optional<DownstreamProbe>& downstream) {
  if (!downstream) return probes;
  return [probes = std::move(probes), &downstream](train::EvalContext& context) {
    nlohmann::json out = probes ? probes(context) : nlohmann::json::object();
    if (out.is_null()) out = nlohmann::json::object();
    if (!out.is_object()) throw std::logic_error("with_downstream: a module's probes must return an object");
    if (auto scores = downstream->evaluate(context)) out["downstream"] = std::move(*scores);
    return out;
  };
}

nlohmann::json downstream_record(const std::optional<DownstreamProbe>& probe, const nlohmann::json& evaluations) {
  if (!probe) {
    return {{"measured", false},
            {"reason", "this protocol version declares no downstream suite (parameters.downstream), so none is run; "
                       "choosing one after the freeze would not be predeclared"}};
  }
  nlohmann::json points = nlohmann::json::array();
  for (const auto& e : evaluations) {
    const auto& probes = e.value("probes", nlohmann::json::object());
    if (probes.is_object() && probes.contains("downstream")) points.push_back(probes.at("downstream"));
  }
  const auto& spec = probe->spec();
  nlohmann::json record = {{"measured", !points.empty()},
                           {"suite", probe->suite().provenance},
                           {"metric", spec.metric},
                           {"batch_rows", spec.batch_rows},
                           {"at_tokens", spec.at_tokens},
                           {"points", points}};
  if (!points.empty() && points.back().value("tokens", std::int64_t{0}) == spec.at_tokens.back()) {
    record["final"] = points.back();
  }
  if (points.empty()) record["reason"] = "the run ended before the first scoring point";
  return record;
}

}  // namespace k3lab::experiments::training
