#pragma once
// The downstream suite (downstream_spec.hpp) during training: the checkpoint probe that scores it at
// the protocol's token counts, and the record a result carries.
#include <cstdint>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::experiments::training {

// The checkpoint probe: scores the suite when the training tokens are one of at_tokens.
class DownstreamProbe {
 public:
  DownstreamProbe(const DownstreamSuite& spec, LoadedSuite suite, std::int64_t vocab_size,
                  std::int64_t sequence_length);
  // The scores at this evaluation point, or nullopt when the protocol does not score it here.
  std::optional<nlohmann::json> evaluate(train::EvalContext& context) const;
  const DownstreamSuite& spec() const { return spec_; }
  const LoadedSuite& suite() const { return suite_; }

 private:
  DownstreamSuite spec_;
  LoadedSuite suite_;
  std::int64_t vocab_size_ = 0;
  std::int64_t sequence_length_ = 0;
};

// A unit's probe: nullopt without a declared suite; a suite that cannot be loaded (removed or changed
// since the preflight) is the data-unavailable failure carrying `data`, like the dataset.
std::optional<UnitOutcome> load_unit_downstream(const DownstreamBlock& block, std::int64_t vocab_size,
                                                std::int64_t sequence_length, const nlohmann::json& options,
                                                std::optional<DownstreamProbe>& probe, const nlohmann::json& data);

// The unit's dataset (its provenance in data["dataset"]) and, with `score`, its downstream suite; the
// data-unavailable failure (carrying `data`) when either cannot be loaded. P: a module's parameters.
template <class P>
std::optional<UnitOutcome> load_unit_data(const P& p, const nlohmann::json& options, bool score,
                                          train::Dataset& dataset, std::optional<DownstreamProbe>& downstream,
                                          nlohmann::json& data) {
  if (auto failure = load_unit_dataset(dataset_request(p, p.model.vocab_size, options), dataset, data)) return failure;
  if (!score) return std::nullopt;
  return load_unit_downstream(p, p.model.vocab_size, p.sequence_length, options, downstream, data);
}

// The module's probes with the downstream scores added under "downstream" where they are due.
// `downstream` must outlive the returned function.
std::function<nlohmann::json(train::EvalContext&)> with_downstream(
    std::function<nlohmann::json(train::EvalContext&)> probes, const std::optional<DownstreamProbe>& downstream);

// data["downstream_task_quality"] of a result: measured (suite, metric, chance, the scores at every
// point, "final" at the unit's last point) from the training evaluations, or not measured with why.
nlohmann::json downstream_record(const std::optional<DownstreamProbe>& probe, const nlohmann::json& evaluations);

}  // namespace k3lab::experiments::training
