#pragma once
// Streaming statistics of FFN activation tensors, fed one micro-batch at a time, so that the full
// profile's sample (64000 tokens x 1408 hidden x 8 layers, about 7e8 values) is never held at once.
//   TailQuantiles   exact upper quantiles of |a| (type 7, as report::quantile) from the largest k
//                   magnitudes, k fixed by the total count known in advance
//   LogHistogram    counts of log2 |a| in equal bins over a predeclared range, plus zeros,
//                   underflow, overflow and non-finite counts
//   RelativeError   relative RMS error ||approx - ref||_2 / ||ref||_2 pooled over every add
//   SaturationCount values with |tanh(z / beta)| >= level
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

namespace k3lab::experiments::situ_qat {

class TailQuantiles {
 public:
  // total: how many values will be added; lowest_q: the lowest quantile that will be asked for.
  TailQuantiles(std::int64_t total, double lowest_q);
  void add(const torch::Tensor& values);  // any shape; |values| are kept
  // Throws std::logic_error unless exactly `total` values were added, or q < lowest_q.
  double quantile(double q) const;
  double max() const;
  std::int64_t seen() const { return seen_; }

 private:
  std::int64_t total_;
  double lowest_q_;
  std::int64_t keep_;
  std::int64_t seen_ = 0;
  torch::Tensor top_;  // (<= keep_) float64, the largest magnitudes so far, in no order
};

class LogHistogram {
 public:
  // Predeclared range of log2 |a|: [-32, 32), the same for every arm and checkpoint.
  static constexpr double kLog2Low = -32.0;
  static constexpr double kLog2High = 32.0;
  explicit LogHistogram(int bins);
  void add(const torch::Tensor& values);
  // {"log2_low", "log2_high", "bins", "zero", "underflow", "overflow", "non_finite", "first_bin", "counts"}:
  // counts from first_bin to the last non-empty bin (trimmed, so sparse tails stay short).
  nlohmann::json to_json() const;
  const std::vector<std::int64_t>& counts() const { return counts_; }
  std::int64_t zero() const { return zero_; }
  std::int64_t underflow() const { return underflow_; }
  std::int64_t overflow() const { return overflow_; }

 private:
  int bins_;
  std::vector<std::int64_t> counts_;
  std::int64_t zero_ = 0, underflow_ = 0, overflow_ = 0, non_finite_ = 0;
};

class RelativeError {
 public:
  void add(const torch::Tensor& reference, const torch::Tensor& approximation);
  // sqrt(sum (approx - ref)^2 / sum ref^2); 0 when both sums are 0.
  double value() const;

 private:
  double error_squares_ = 0, reference_squares_ = 0;
};

class SaturationCount {
 public:
  void add(const torch::Tensor& pre_activations, double beta, double level);
  double fraction() const { return total_ == 0 ? 0.0 : static_cast<double>(saturated_) / static_cast<double>(total_); }
  std::int64_t saturated() const { return saturated_; }
  std::int64_t total() const { return total_; }

 private:
  std::int64_t saturated_ = 0, total_ = 0;
};

}  // namespace k3lab::experiments::situ_qat
