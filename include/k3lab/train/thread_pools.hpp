#pragma once
// Sets the compute thread pools from the process's thread policy (core/thread_policy.hpp): LibTorch's
// intra-op pool and OpenBLAS's pool to policy.threads, LibTorch's inter-op pool to one (k3lab trains one
// op stream at a time). With threads = 1 the process keeps one core busy.
#include <nlohmann/json.hpp>

#include "k3lab/core/thread_policy.hpp"

namespace k3lab::train {

// What was set: {threads, source, openmp_wait_policy, intra_op, inter_op, blas}; blas is the thread count
// OpenBLAS reports afterwards, or "not OpenBLAS" when the loaded BLAS has no openblas_set_num_threads.
nlohmann::json apply_thread_policy(const core::ThreadPolicy& policy);

// OpenBLAS's pool to `threads`: the count it reports afterwards, or "not OpenBLAS".
nlohmann::json set_blas_threads(int threads);

}  // namespace k3lab::train
