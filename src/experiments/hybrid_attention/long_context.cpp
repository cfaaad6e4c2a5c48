#include "hybrid_attention/long_context.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/core/elapsed.hpp"
#include "k3lab/train/device.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

using Clock = std::chrono::steady_clock;
using core::seconds_since;

torch::Tensor rows_tensor(std::span<const std::int64_t> tokens, std::int64_t rows, std::int64_t length) {
  // (rows, length) int64 on the CPU, a copy.
  return torch::from_blob(const_cast<std::int64_t*>(tokens.data()), {rows, length}, torch::kInt64).clone();
}

std::vector<torch::Tensor> kda_states(const models::InferenceState& state) {
  std::vector<torch::Tensor> out;
  for (const auto& layer : state.layers) {
    if (layer.kda.defined()) out.push_back(layer.kda.recurrent);  // (B, H, K, V)
  }
  return out;
}

}  // namespace

std::int64_t prefill_chunk(std::int64_t sequence_length, std::int64_t limit) {
  if (sequence_length <= 0 || limit <= 0) throw std::invalid_argument("prefill_chunk: sizes must be positive");
  for (std::int64_t c = std::min(sequence_length, limit); c >= 1; --c) {
    if (sequence_length % c == 0) return c;
  }
  return 1;
}

std::vector<double> kda_state_norms(const models::InferenceState& state) {
  const auto states = kda_states(state);
  if (states.empty()) return {};
  torch::Tensor sum;
  for (const auto& s : states) {
    const auto per_head = s.to(torch::kFloat64).pow(2).sum({2, 3}).sqrt();  // (B, H)
    const auto mean_heads = per_head.mean(1);                                // (B)
    sum = sum.defined() ? sum + mean_heads : mean_heads;
  }
  const auto mean = (sum / static_cast<double>(states.size())).cpu().contiguous();
  return {mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel()};
}

StreamedForward streamed_forward(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t rows,
                                 std::int64_t length, const StreamOptions& options, const torch::Device& device) {
  if (rows <= 0 || length <= 1 || static_cast<std::int64_t>(tokens.size()) != rows * length) {
    throw std::invalid_argument("streamed_forward: expected rows x length tokens with length >= 2");
  }
  if (options.chunk <= 0) throw std::invalid_argument("streamed_forward: chunk must be positive");
  for (auto p : options.norm_positions) {
    if (p <= 0 || p > length || (p % options.chunk != 0 && p != length)) {
      throw std::invalid_argument("streamed_forward: norm position " + std::to_string(p) +
                                  " must be a multiple of the chunk (" + std::to_string(options.chunk) +
                                  ") or the length, inside (0, " + std::to_string(length) + "]");
    }
  }
  torch::NoGradGuard no_grad;
  const auto all = rows_tensor(tokens, rows, length);  // (rows, length)
  StreamedForward out;
  out.rows = rows;
  out.length = length;
  out.predictions.assign(static_cast<std::size_t>(rows * length), 0);
  if (options.losses) out.losses.assign(static_cast<std::size_t>(rows * (length - 1)), 0.0f);
  out.kda_state_norms.resize(options.norm_positions.size());
  auto state = model->new_inference_state();
  for (std::int64_t start = 0; start < length; start += options.chunk) {
    const std::int64_t n = std::min(options.chunk, length - start);
    const auto input = all.slice(1, start, start + n).to(device);
    const auto logits = model->forward_with_state(input, state).to(torch::kFloat32);  // (rows, n, V)
    const auto predicted = logits.argmax(-1).cpu().contiguous();                      // (rows, n)
    for (std::int64_t r = 0; r < rows; ++r) {
      std::copy_n(predicted.data_ptr<std::int64_t>() + r * n, n, out.predictions.begin() + r * length + start);
    }
    if (options.losses) {
      // Position t predicts token t + 1; the chunk's last position needs the next chunk's first token.
      const std::int64_t scored = std::min(n, length - 1 - start);
      if (scored > 0) {
        const auto targets = all.slice(1, start + 1, start + 1 + scored).to(device);        // (rows, scored)
        const auto log_probs = torch::log_softmax(logits.slice(1, 0, scored), -1);          // (rows, scored, V)
        const auto nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu().contiguous();
        for (std::int64_t r = 0; r < rows; ++r) {
          std::copy_n(nll.data_ptr<float>() + r * scored, scored, out.losses.begin() + r * (length - 1) + start);
        }
      }
    }
    for (std::size_t i = 0; i < options.norm_positions.size(); ++i) {
      if (options.norm_positions[i] == start + n) out.kda_state_norms[i] = kda_state_norms(state);
    }
  }
  out.state_bytes = state.bytes();
  return out;
}

nlohmann::json DecodeDrift::to_json() const {
  return {{"tokens", tokens},
          {"max_abs_logit_difference", max_abs_logit_difference},
          {"relative_state_difference", relative_state_difference}};
}

DecodeDrift decode_drift(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t chunk,
                         const torch::Device& device) {
  const auto length = static_cast<std::int64_t>(tokens.size());
  if (length < 1 || chunk <= 0) throw std::invalid_argument("decode_drift: needs tokens and a positive chunk");
  torch::NoGradGuard no_grad;
  const auto all = rows_tensor(tokens, 1, length).to(device);  // (1, L)
  auto chunked = model->new_inference_state();
  std::vector<torch::Tensor> chunk_logits;
  for (std::int64_t start = 0; start < length; start += chunk) {
    const std::int64_t n = std::min(chunk, length - start);
    chunk_logits.push_back(model->forward_with_state(all.slice(1, start, start + n), chunked).to(torch::kFloat32));
  }
  const auto reference = torch::cat(chunk_logits, 1);  // (1, L, V)
  auto stepped = model->new_inference_state();
  double max_diff = 0.0;
  for (std::int64_t t = 0; t < length; ++t) {
    const auto logits = model->forward_with_state(all.slice(1, t, t + 1), stepped).to(torch::kFloat32);  // (1, 1, V)
    max_diff = std::max(max_diff, (logits - reference.slice(1, t, t + 1)).abs().max().item<double>());
  }
  DecodeDrift drift;
  drift.tokens = length;
  drift.max_abs_logit_difference = max_diff;
  const auto a = kda_states(chunked);
  const auto b = kda_states(stepped);
  double diff2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff2 += (b[i].to(torch::kFloat64) - a[i].to(torch::kFloat64)).pow(2).sum().item<double>();
    ref2 += a[i].to(torch::kFloat64).pow(2).sum().item<double>();
  }
  drift.relative_state_difference = ref2 > 0 ? std::sqrt(diff2 / ref2) : 0.0;
  return drift;
}

nlohmann::json InferenceProbe::to_json() const {
  return {{"length", length},
          {"decode_tokens", decode_tokens},
          {"state_bytes", state_bytes},
          {"peak_bytes", peak_bytes ? nlohmann::json(*peak_bytes) : nlohmann::json(nullptr)},
          {"prefill_seconds", prefill_seconds},
          {"decode_seconds", decode_seconds},
          {"prefill_tokens_per_s", prefill_seconds > 0 ? static_cast<double>(length) / prefill_seconds : 0.0},
          {"decode_tokens_per_s", decode_seconds > 0 ? static_cast<double>(decode_tokens) / decode_seconds : 0.0}};
}

InferenceProbe inference_probe(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t chunk,
                               std::int64_t decode_tokens, const torch::Device& device) {
  const auto length = static_cast<std::int64_t>(tokens.size());
  if (length < 1 || chunk <= 0 || decode_tokens < 0) {
    throw std::invalid_argument("inference_probe: needs tokens, a positive chunk and decode_tokens >= 0");
  }
  torch::NoGradGuard no_grad;
  const auto all = rows_tensor(tokens, 1, length).to(device);  // (1, L)
  train::synchronize(device);
  train::reset_peak_memory(device);
  InferenceProbe probe;
  probe.length = length;
  probe.decode_tokens = decode_tokens;
  auto state = model->new_inference_state();
  const auto prefill_start = Clock::now();
  torch::Tensor last;
  for (std::int64_t start = 0; start < length; start += chunk) {
    const std::int64_t n = std::min(chunk, length - start);
    last = model->forward_with_state(all.slice(1, start, start + n), state).select(1, n - 1);  // (1, V)
  }
  train::synchronize(device);
  probe.prefill_seconds = seconds_since(prefill_start);
  const auto decode_start = Clock::now();
  for (std::int64_t i = 0; i < decode_tokens; ++i) {
    const auto next = last.argmax(-1).unsqueeze(1);  // (1, 1)
    last = model->forward_with_state(next, state).select(1, 0);
  }
  train::synchronize(device);
  probe.decode_seconds = seconds_since(decode_start);
  probe.state_bytes = state.bytes();
  probe.peak_bytes = train::peak_memory_bytes(device);
  return probe;
}

}  // namespace k3lab::experiments::hybrid_attention
