#include "situ_qat/activation_stats.hpp"

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace k3lab::experiments::situ_qat {

TailQuantiles::TailQuantiles(std::int64_t total, double lowest_q) : total_(total), lowest_q_(lowest_q) {
  if (total <= 0 || !(lowest_q >= 0 && lowest_q <= 1)) {
    throw std::invalid_argument("TailQuantiles: needs total > 0 and lowest_q in [0, 1]");
  }
  // Type 7 reads ascending order statistics floor(h) and floor(h) + 1, h = (total - 1) q: the largest
  // total - floor(h) values hold both for every q >= lowest_q.
  const auto h = static_cast<std::int64_t>(std::floor(static_cast<double>(total - 1) * lowest_q));
  keep_ = std::min(total, total - h + 1);
}

void TailQuantiles::add(const torch::Tensor& values) {
  torch::NoGradGuard no_grad;
  const auto magnitudes = values.detach().reshape({-1}).abs().to(torch::kFloat64);  // (n)
  seen_ += magnitudes.numel();
  if (seen_ > total_) throw std::logic_error("TailQuantiles: more values than the declared total");
  const auto merged = top_.defined() ? torch::cat({top_, magnitudes.to(top_.device())}) : magnitudes;
  top_ = merged.numel() <= keep_ ? merged : std::get<0>(merged.topk(keep_));
}

double TailQuantiles::quantile(double q) const {
  if (seen_ != total_) {
    throw std::logic_error("TailQuantiles: " + std::to_string(seen_) + " of " + std::to_string(total_) + " values added");
  }
  if (q < lowest_q_ || q > 1) throw std::logic_error("TailQuantiles: quantile below the declared lowest_q");
  const auto descending = std::get<0>(top_.to(torch::kCPU).sort(0, /*descending=*/true));  // (keep)
  const auto* d = descending.data_ptr<double>();
  const double h = static_cast<double>(total_ - 1) * q;
  const auto lo = static_cast<std::int64_t>(std::floor(h));
  const double at_lo = d[total_ - 1 - lo];
  if (lo + 1 > total_ - 1) return at_lo;
  const double at_hi = d[total_ - 1 - (lo + 1)];
  return at_lo + (h - static_cast<double>(lo)) * (at_hi - at_lo);
}

double TailQuantiles::max() const {
  if (!top_.defined()) throw std::logic_error("TailQuantiles: no values added");
  return top_.max().item<double>();
}

LogHistogram::LogHistogram(int bins) : bins_(bins), counts_(static_cast<std::size_t>(bins), 0) {
  if (bins < 1) throw std::invalid_argument("LogHistogram: bins must be positive");
}

void LogHistogram::add(const torch::Tensor& values) {
  torch::NoGradGuard no_grad;
  const auto magnitudes = values.detach().reshape({-1}).abs().to(torch::kFloat64);  // (n)
  const auto finite = torch::isfinite(magnitudes);
  non_finite_ += magnitudes.numel() - finite.sum().item<std::int64_t>();
  const auto positive = magnitudes.masked_select(finite & (magnitudes > 0));  // (m)
  zero_ += (finite & (magnitudes == 0)).sum().item<std::int64_t>();
  const double per_unit = static_cast<double>(bins_) / (kLog2High - kLog2Low);
  // Slot 0: underflow, 1..bins: the bins, bins + 1: overflow.
  const auto index = ((torch::log2(positive) - kLog2Low) * per_unit).floor().clamp(-1, bins_).to(torch::kLong) + 1;
  const auto slots = torch::bincount(index, {}, bins_ + 2).to(torch::kCPU);
  const auto* s = slots.data_ptr<std::int64_t>();
  underflow_ += s[0];
  overflow_ += s[bins_ + 1];
  for (int b = 0; b < bins_; ++b) counts_[static_cast<std::size_t>(b)] += s[b + 1];
}

nlohmann::json LogHistogram::to_json() const {
  std::size_t first = 0, last = counts_.size();
  while (first < counts_.size() && counts_[first] == 0) ++first;
  while (last > first && counts_[last - 1] == 0) --last;
  return {{"log2_low", kLog2Low},  {"log2_high", kLog2High}, {"bins", bins_},
          {"zero", zero_},         {"underflow", underflow_}, {"overflow", overflow_},
          {"non_finite", non_finite_}, {"first_bin", first},
          {"counts", std::vector<std::int64_t>(counts_.begin() + static_cast<std::ptrdiff_t>(first),
                                               counts_.begin() + static_cast<std::ptrdiff_t>(last))}};
}

void RelativeError::add(const torch::Tensor& reference, const torch::Tensor& approximation) {
  torch::NoGradGuard no_grad;
  const auto ref = reference.detach().to(torch::kFloat64);
  const auto approx = approximation.detach().to(torch::kFloat64);
  error_squares_ += (approx - ref).pow(2).sum().item<double>();
  reference_squares_ += ref.pow(2).sum().item<double>();
}

double RelativeError::value() const {
  if (reference_squares_ == 0) return error_squares_ == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(error_squares_ / reference_squares_);
}

void SaturationCount::add(const torch::Tensor& pre_activations, double beta, double level) {
  torch::NoGradGuard no_grad;
  const auto z = pre_activations.detach().to(torch::kFloat64);
  saturated_ += (torch::tanh(z / beta).abs() >= level).sum().item<std::int64_t>();
  total_ += z.numel();
}

}  // namespace k3lab::experiments::situ_qat
