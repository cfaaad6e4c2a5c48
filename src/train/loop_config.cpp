#include <algorithm>
#include <stdexcept>

#include "k3lab/train/distributed.hpp"
#include "k3lab/train/task_trainer.hpp"

namespace k3lab::train {
namespace {

// Auto micro-batch: as many whole rows as fit this many tokens (at least one row).
constexpr std::int64_t kAutoMicroBatchTokens = 16384;

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument("trainer: " + field + " " + message);
}

}  // namespace

void LoopConfig::validate() const {
  require(token_budget > 0, "token_budget", "must be positive");
  require(batch_tokens > 0, "batch_tokens", "must be positive");
  require(sequence_length > 0, "sequence_length", "must be positive");
  require(batch_tokens % sequence_length == 0, "batch_tokens",
          "must be whole sequences: a multiple of sequence_length (" + std::to_string(sequence_length) + ")");
  require(token_budget % batch_tokens == 0, "token_budget",
          "must be a whole number of steps: a multiple of batch_tokens (" + std::to_string(batch_tokens) + ")");
  require(eval_interval_tokens > 0 && eval_interval_tokens % batch_tokens == 0, "eval_interval_tokens",
          "must be a positive multiple of batch_tokens (" + std::to_string(batch_tokens) + ")");
  require(token_budget % eval_interval_tokens == 0, "token_budget",
          "must be a multiple of eval_interval_tokens so the last evaluation falls exactly on the budget");
  require(rows_per_step() % world_size() == 0, "batch_tokens",
          "gives " + std::to_string(rows_per_step()) + " rows per step, which do not split evenly across " +
              std::to_string(world_size()) + " data-parallel ranks: use a world size that divides " +
              std::to_string(rows_per_step()));
  require(micro_batch_rows >= 0, "micro_batch_rows", "must be >= 0 (0: automatic)");
  require(micro_batch_rows == 0 || rows_per_rank() % resolved_micro_batch_rows() == 0, "micro_batch_rows",
          "must divide the rows per step" + std::string(world_size() > 1 ? " of each rank" : "") + " (" +
              std::to_string(rows_per_rank()) + ")");
  require(grad_clip >= 0, "grad_clip", "must be >= 0");
  require(safety_timeout_seconds > 0, "safety_timeout_seconds", "must be positive");
  require(spikes.window >= 1 && spikes.factor > 1.0, "spikes", "needs window >= 1 and factor > 1");
}

int LoopConfig::world_size() const { return distributed ? distributed->world_size() : 1; }

std::int64_t LoopConfig::resolved_micro_batch_rows() const {
  // A rank never holds more rows than it trains: data parallelism can leave fewer per rank than the
  // protocol's micro-batch, the same for every arm.
  if (micro_batch_rows > 0) return std::min(micro_batch_rows, rows_per_rank());
  std::int64_t rows = std::max<std::int64_t>(1, kAutoMicroBatchTokens / sequence_length);
  rows = std::min(rows, rows_per_rank());
  while (rows_per_rank() % rows != 0) --rows;
  return rows;
}

nlohmann::json LoopConfig::to_json() const {
  return {{"order_seed", order_seed},
          {"token_budget", token_budget},
          {"batch_tokens", batch_tokens},
          {"sequence_length", sequence_length},
          {"eval_interval_tokens", eval_interval_tokens},
          {"micro_batch_rows", resolved_micro_batch_rows()},
          {"optimizer", optimizer.to_json()},
          {"grad_clip", grad_clip},
          {"loss_spikes", {{"window", spikes.window}, {"factor", spikes.factor}}}};
}

}  // namespace k3lab::train
