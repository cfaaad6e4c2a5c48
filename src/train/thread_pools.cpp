#include "k3lab/train/thread_pools.hpp"

#include <dlfcn.h>

#include <torch/torch.h>

namespace k3lab::train {
namespace {

// OpenBLAS's own setters, looked up in the loaded libraries: LibTorch reaches BLAS through libblas.so.3,
// which may be OpenBLAS (Debian's default), another BLAS, or none.
using SetThreads = void (*)(int);
using GetThreads = int (*)();

// LibTorch accepts the inter-op size once, before its first inter-op task; later calls throw.
void set_interop_once() {
  static const bool done = [] {
    try {
      torch::set_num_interop_threads(1);
    } catch (const c10::Error&) {
    }
    return true;
  }();
  (void)done;
}

}  // namespace

nlohmann::json set_blas_threads(int threads) {
  // Looked up once: micro-batch lanes switch the pool around every wave of a step.
  static const auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  static const auto get = reinterpret_cast<GetThreads>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (!set || !get) return "not OpenBLAS";
  set(threads);
  return get();
}

nlohmann::json apply_thread_policy(const core::ThreadPolicy& policy) {
  torch::set_num_threads(policy.threads);
  set_interop_once();
  auto applied = policy.to_json();
  applied["intra_op"] = torch::get_num_threads();
  applied["inter_op"] = torch::get_num_interop_threads();
  applied["blas"] = set_blas_threads(policy.threads);
  return applied;
}

}  // namespace k3lab::train
