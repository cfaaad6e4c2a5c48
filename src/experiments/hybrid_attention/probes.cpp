#include "hybrid_attention/probes.hpp"

#include <algorithm>

#include "k3lab/models/memory_accounting.hpp"
#include "hybrid_attention/long_context.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

constexpr std::int64_t kKeyTokens = 3;
constexpr std::int64_t kValueTokens = 2;

nlohmann::json score_json(const RetrievalScore& s) {
  return {{"queries", s.queries},
          {"correct", s.correct},
          {"accuracy", s.accuracy()},
          {"answer_tokens", s.answer_tokens},
          {"tokens_correct", s.tokens_correct}};
}

RetrievalScore score_all(models::DecoderLM& model, const std::vector<RetrievalExample>& examples,
                         const std::vector<std::size_t>& chosen, std::int64_t chunk, const torch::Device& device) {
  RetrievalScore total;
  if (chosen.empty()) return total;
  const std::int64_t length = examples.front().length;
  const auto rows = static_cast<std::size_t>(probe_rows(chunk, length, model->config().mla.num_heads));
  for (std::size_t first = 0; first < chosen.size(); first += rows) {
    const std::size_t n = std::min<std::size_t>(rows, chosen.size() - first);
    std::vector<std::int64_t> tokens;
    tokens.reserve(n * static_cast<std::size_t>(length));
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = examples[chosen[first + i]].tokens;
      tokens.insert(tokens.end(), t.begin(), t.end());
    }
    StreamOptions options;
    options.chunk = chunk;
    options.losses = false;
    const auto out = streamed_forward(model, tokens, static_cast<std::int64_t>(n), length, options, device);
    for (std::size_t i = 0; i < n; ++i) {
      const std::span<const std::int64_t> predictions(out.predictions.data() + i * length, static_cast<std::size_t>(length));
      total += score_retrieval(examples[chosen[first + i]], predictions);
    }
  }
  return total;
}

}  // namespace

std::int64_t probe_rows(std::int64_t chunk, std::int64_t length, std::int64_t heads) {
  constexpr double kScoreElements = 1024.0 * 1024.0 * 1024.0;  // 4 GiB of float32 scores
  const double per_row = static_cast<double>(chunk) * static_cast<double>(length) * static_cast<double>(std::max<std::int64_t>(1, heads));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(kScoreElements / per_row), 1, 8);
}

std::vector<std::size_t> evenly_spaced(std::size_t total, std::size_t count) {
  count = std::min(count, total);
  std::vector<std::size_t> out(count);
  for (std::size_t j = 0; j < count; ++j) out[j] = j * total / count;
  return out;
}

LongContextProbes::LongContextProbes(const Parameters& p, const train::Dataset& data) : p_(p), data_(data) {
  chunk_ = prefill_chunk(p.sequence_length);
  const auto vocab = task_vocabulary(p.tokenizer, p.model.vocab_size);
  const auto examples = static_cast<std::int64_t>(p.long_context_examples);
  for (const auto length : p.long_context_lengths) {
    LengthExamples e;
    e.length = length;
    for (std::int64_t i = 0; i < examples; ++i) {
      MqarSpec mqar{length, mqar_pairs_for_length(length), kKeyTokens, kValueTokens};
      e.mqar.push_back(make_mqar_example(mqar, vocab, p.data_order_seed, i));
      const auto haystack = text(length, i, examples);
      e.needle.push_back(
          make_needle_example({length, kKeyTokens, kValueTokens}, vocab, haystack, p.data_order_seed, i));
    }
    examples_.push_back(std::move(e));
    longest_ = std::max(longest_, length);
  }
  for (std::int64_t i = 0; i < examples; ++i) {
    const auto row = text(longest_, i, examples);
    clean_.insert(clean_.end(), row.begin(), row.end());
  }
}

std::vector<std::int64_t> LongContextProbes::text(std::int64_t length, std::int64_t index, std::int64_t count) const {
  // Evenly spaced slices of the held-out text; repeated when the text is shorter than the length.
  const std::int64_t available = data_.validation.size();
  if (available >= length) {
    const std::int64_t spare = available - length;
    const std::int64_t offset = count > 1 ? spare * index / (count - 1) : 0;
    return data_.validation.slice(offset, length);
  }
  tiled_ = true;
  const auto all = data_.validation.slice(0, available);
  std::vector<std::int64_t> out(static_cast<std::size_t>(length));
  const std::int64_t shift = (available * index) / std::max<std::int64_t>(1, count);
  for (std::int64_t j = 0; j < length; ++j) out[j] = all[(j + shift) % available];
  return out;
}

nlohmann::json LongContextProbes::evaluate(models::DecoderLM& model, const torch::Device& device, bool final) const {
  const auto all = static_cast<std::size_t>(p_.long_context_examples);
  const auto chosen = evenly_spaced(all, final || !p_.long_context_checkpoint_examples
                                             ? all
                                             : static_cast<std::size_t>(*p_.long_context_checkpoint_examples));
  auto out = position_probes(model, device, chosen);
  out["retrieval"] = retrieval(model, device, chosen);
  out["examples_per_length"] = chosen.size();
  out["haystack_tiled"] = tiled_;
  return out;
}

nlohmann::json LongContextProbes::retrieval(models::DecoderLM& model, const torch::Device& device,
                                            const std::vector<std::size_t>& chosen) const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : examples_) {
    out.push_back({{"length", e.length},
                   {"beyond_training_window", e.length > p_.sequence_length},
                   {"mqar", score_json(score_all(model, e.mqar, chosen, chunk_, device))},
                   {"needle", score_json(score_all(model, e.needle, chosen, chunk_, device))}});
  }
  return out;
}

// Loss by position and state norms on the chosen rows of clean held-out text of the longest length.
nlohmann::json LongContextProbes::position_probes(models::DecoderLM& model, const torch::Device& device,
                                                  const std::vector<std::size_t>& chosen) const {
  const std::int64_t T = p_.sequence_length;
  std::vector<std::int64_t> positions;
  for (const auto length : p_.long_context_lengths) {
    if (length % chunk_ == 0 || length == longest_) positions.push_back(length);
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  const auto rows = static_cast<std::int64_t>(chosen.size());
  std::vector<double> bucket_sum(static_cast<std::size_t>((longest_ - 1 + T - 1) / T), 0.0);
  std::vector<std::int64_t> bucket_count(bucket_sum.size(), 0);
  std::vector<double> norm_sum(positions.size(), 0.0);
  bool has_kda = false;
  const std::int64_t step = probe_rows(chunk_, longest_, model->config().mla.num_heads);
  for (std::int64_t first = 0; first < rows; first += step) {
    const std::int64_t n = std::min(step, rows - first);
    std::vector<std::int64_t> tokens;
    tokens.reserve(static_cast<std::size_t>(n * longest_));
    for (std::int64_t r = 0; r < n; ++r) {
      const auto begin = clean_.begin() + static_cast<std::ptrdiff_t>(chosen[first + r]) * longest_;
      tokens.insert(tokens.end(), begin, begin + longest_);
    }
    StreamOptions options;
    options.chunk = chunk_;
    options.norm_positions = positions;
    const auto out = streamed_forward(model, tokens, n, longest_, options, device);
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t t = 0; t < longest_ - 1; ++t) {
        bucket_sum[static_cast<std::size_t>(t / T)] += out.losses[r * (longest_ - 1) + t];
        bucket_count[static_cast<std::size_t>(t / T)] += 1;
      }
    }
    for (std::size_t i = 0; i < positions.size(); ++i) {
      for (double v : out.kda_state_norms[i]) {
        norm_sum[i] += v;
        has_kda = true;
      }
    }
  }
  nlohmann::json buckets = nlohmann::json::array();
  for (std::size_t b = 0; b < bucket_sum.size(); ++b) {
    buckets.push_back({{"from", static_cast<std::int64_t>(b) * T},
                       {"to", std::min(static_cast<std::int64_t>(b + 1) * T, longest_ - 1)},
                       {"beyond_training_window", static_cast<std::int64_t>(b) * T >= T},
                       {"loss", bucket_sum[b] / static_cast<double>(bucket_count[b])}});
  }
  nlohmann::json norms = nlohmann::json::array();
  if (has_kda) {
    for (std::size_t i = 0; i < positions.size(); ++i) {
      norms.push_back({{"position", positions[i]}, {"mean_state_norm", norm_sum[i] / static_cast<double>(rows)}});
    }
  }
  return {{"loss_by_position", {{"length", longest_}, {"rows", rows}, {"buckets", buckets}}},
          {"kda_state_norm", norms}};
}

FinalProbes LongContextProbes::final_probes(models::DecoderLM& model, const torch::Device& device) const {
  FinalProbes out;
  const auto& config = model->config();
  // The trained model runs in float32, so the accounting is asked for float32 state and caches.
  const auto accounting = models::inference_memory(config, models::MemoryPrecision{4, 4, 4});
  nlohmann::json memory = nlohmann::json::array(), speed = nlohmann::json::array();
  for (const auto length : p_.long_context_lengths) {
    const auto tokens = text(length, 0, 1);
    const auto probe = inference_probe(model, tokens, chunk_, kProbeDecodeTokens, device);
    memory.push_back({{"length", length},
                      {"decode_tokens", kProbeDecodeTokens},
                      {"state_bytes", probe.state_bytes},
                      {"accounted_state_bytes", accounting.per_request(length + kProbeDecodeTokens)},
                      {"kv_bytes_per_token", accounting.kv_bytes_per_token},
                      {"fixed_state_bytes", accounting.fixed_bytes()},
                      {"peak_bytes", probe.peak_bytes ? nlohmann::json(*probe.peak_bytes) : nlohmann::json(nullptr)}});
    const auto j = probe.to_json();
    speed.push_back({{"length", length},
                     {"prefill_seconds", j.at("prefill_seconds")},
                     {"decode_seconds", j.at("decode_seconds")},
                     {"prefill_tokens_per_s", j.at("prefill_tokens_per_s")},
                     {"decode_tokens_per_s", j.at("decode_tokens_per_s")}});
  }
  const std::int64_t drift_tokens = std::min(longest_, 2 * p_.sequence_length);
  const auto drift = decode_drift(model, text(drift_tokens, 0, 1), chunk_, device);
  out.data = {{"inference_memory", memory}, {"decode_drift", drift.to_json()}};
  out.timing = {{"inference_speed", speed}};
  return out;
}

}  // namespace k3lab::experiments::hybrid_attention
