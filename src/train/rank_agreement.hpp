#pragma once
// How the ranks of a data-parallel run agree (task_trainer.cpp): a common start, averaged gradients,
// and one verdict on a failure that may have happened on any rank. Private to src/train.
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "k3lab/train/distributed.hpp"

namespace k3lab::train {

struct StepFailure {
  std::string failure_class;
  std::string detail;
};

// One slot per rank, this rank's value in its own slot; summed across ranks, every rank then sees
// every rank's value.
std::vector<double> rank_slots(int world, int rank, double value);

// A failure as a code in a float64 slot (0: none), for failure_classes a rank reports to its peers.
double failure_code(const std::optional<StepFailure>& failure);

// The outcome every rank agrees on from every rank's code (and, for messages, value): the failure of
// the lowest failing rank, described with this rank's own detail when it is that rank.
std::optional<StepFailure> agreed_failure(const std::vector<double>& codes, const std::vector<double>& values,
                                          const std::optional<StepFailure>& local, int rank, const std::string& where);

// Every rank starts from rank 0's parameters (as DDP does) at the same step; a rank that found
// another checkpoint (or none) means the checkpoint folder is not shared.
void synchronize_start(DistributedContext& dist, torch::nn::Module& model, std::int64_t step);

// Sum of every rank's gradients divided by the world size: the gradient of the global batch's mean
// loss, since every rank's loss is the mean over the same number of tokens. One collective.
void all_reduce_gradients(DistributedContext& dist, torch::nn::Module& model);

}  // namespace k3lab::train
