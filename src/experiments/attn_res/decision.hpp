#pragma once
// The arithmetic of attn-res's predeclared decision rule, torch-free and ledger-free so that it can
// be checked by hand:
//   gain:        mean paired per-seed relative improvement (baseline - arm) / baseline of the
//                validation loss at the budget >= min_relative_improvement, and the paired
//                bootstrap interval of that mean (report::paired_bootstrap_interval, resampling
//                seeds) excludes zero;
//   constraints: stored residual memory regression arm / baseline - 1 <= max_memory_regression and
//                throughput regression 1 - arm / baseline <= max_throughput_regression;
//   Block:       the fraction of Full's mean improvement it recovers, beside the ratio of their
//                stored residual memory.
#include <cstddef>
#include <optional>
#include <vector>

#include "attn_res/parameters.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::attn_res {

struct PairedGain {
  std::vector<double> relative_improvements;  // per seed, in the order given
  report::Interval interval;                  // estimate: their mean
  std::size_t seeds_improved = 0;             // seeds whose relative improvement is > 0
  bool meets_minimum = false;                 // mean >= min_relative_improvement
  bool claimed() const { return meets_minimum && interval.excludes_zero(); }
};

// `arm` and `baseline` are the validation losses of the same seeds, in the same order (n >= 1).
PairedGain paired_gain(const std::vector<double>& arm, const std::vector<double>& baseline, const Decision& d);

// arm / baseline - 1: the memory growth of a mechanism (positive is worse).
double memory_regression(double arm_bytes, double baseline_bytes);
// 1 - arm / baseline: the throughput loss of a mechanism (positive is worse).
double throughput_regression(double arm_tokens_per_s, double baseline_tokens_per_s);

// Block's mean improvement over Full's; nullopt when Full gained nothing (no gain to recover).
std::optional<double> fraction_of_gain(double block_mean_improvement, double full_mean_improvement);

}  // namespace k3lab::experiments::attn_res
