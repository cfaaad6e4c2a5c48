#pragma once
// Micro-batches of one step trained side by side on the CPU (issue 19). On this kind of machine one
// step's products and element-wise operators split poorly across cores (docs/benchmarks.md, "KDA's
// chunk loop and short convolution on two threads": a 2048x256x256 product goes from about 95 to 130
// GFLOP/s on two OpenBLAS threads, while two one-thread processes keep 92 each). Independent
// micro-batches need no splitting: each lane runs whole micro-batches on its own thread with LibTorch's
// intra-op pool and OpenBLAS at one thread, so `lanes` lanes keep `lanes` cores busy without sharing an
// operator.
//
// The result does not depend on the number of lanes: every micro-batch's gradient is computed on its own
// (with one intra-op thread, as at --threads 1) and added to the parameters' gradients in micro-batch
// order, the order and arithmetic of sequential accumulation. Lanes run only where that holds: on the
// CPU, with the OpenMP runtime LibTorch uses (its thread count is per calling thread), for tasks whose
// loss() may run concurrently (TrainingTask::loss_is_reentrant). Evaluation work made of independent
// batches (multiple-choice scoring) runs side by side the same way (run_side_by_side).
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

namespace k3lab::train {

// How many lanes `threads` cores give for a step of `micro_batches` micro-batches on `device`: at most
// one per micro-batch, 1 on a GPU or without a per-thread OpenMP runtime.
int micro_batch_lanes(int threads, std::int64_t micro_batches, const torch::Device& device);

// Runs job(i) for i in [0, count) `lanes` at a time, each lane on its own thread (the calling thread is
// lane 0, kept threads the others) with one intra-op and one BLAS thread; the pools are back at `threads`
// afterwards. lanes < 2: one after another on the calling thread, the pools untouched. The first
// exception in index order is rethrown after its wave. For work whose results do not depend on the
// thread count of an operator: e.g. scoring batches of a multiple-choice suite.
void run_side_by_side(int lanes, int threads, std::int64_t count, const std::function<void(std::int64_t)>& job);

// What one micro-batch gave back: its loss value and its gradient for each trainable parameter (in the
// order of `parameters`; undefined where the loss does not reach it).
struct MicroBatchGradient {
  double loss = 0;
  nlohmann::json extras;
  std::vector<torch::Tensor> gradients;
};

// A step's micro-batches through run_side_by_side, in waves of `lanes` jobs. A job's second
// argument says whether its gradient must be kept apart (backward_micro_batch, lanes > 1) or may go straight
// into .grad (backward(), one lane: no second copy of the gradients). `consume` gets every result on the
// calling thread in job order, one wave at a time (so at most `lanes` gradients are alive), and may
// return false to stop before the next wave. The first exception in job order is rethrown after its wave.
using MicroBatchJob = std::function<MicroBatchGradient(std::int64_t index, bool gradients_apart)>;
void run_in_lanes(int lanes, int threads, std::int64_t count, const MicroBatchJob& job,
                  const std::function<bool(std::int64_t, MicroBatchGradient&)>& consume);

// The micro-batch's gradient of `objective`: kept apart (returned, .grad untouched) or, when not
// `apart`, accumulated into the parameters' .grad by backward() (returns nothing).
std::vector<torch::Tensor> backward_micro_batch(const torch::Tensor& objective,
                                                const std::vector<torch::Tensor>& parameters, bool apart);

// The module's parameters that require a gradient, in parameters() order.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& model);

// Adds a micro-batch's gradients to the parameters' .grad as backward() would: set when undefined,
// added in place otherwise.
void accumulate_gradients(const std::vector<torch::Tensor>& parameters, std::vector<torch::Tensor>& gradients);

}  // namespace k3lab::train
