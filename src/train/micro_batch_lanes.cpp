#include "k3lab/train/micro_batch_lanes.hpp"

#include <dlfcn.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>
#include <torch/torch.h>

#include "k3lab/train/thread_pools.hpp"

namespace k3lab::train {
namespace {

// OpenMP's per-thread team size, looked up in the loaded runtime: LibTorch's OpenMP backend sizes each
// parallel region from the calling thread's setting, so a lane can run its operators on one thread while
// another lane does the same. Absent (another backend, whose pool is shared): no lanes.
using SetThreads = void (*)(int);

SetThreads openmp_set_num_threads() {
  static const auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return set;
}

// LibTorch's intra-op pool is OpenMP's (another backend ignores the per-thread setting), and the
// runtime is loaded.
bool per_thread_intra_op() {
  static const bool openmp = openmp_set_num_threads() != nullptr &&
                             at::get_parallel_info().find("parallel backend: OpenMP") != std::string::npos;
  return openmp;
}

// One intra-op thread on the calling thread for the guard's lifetime. LibTorch sets a thread's OpenMP
// team size lazily from the process-wide count on its first query, so query first, then override.
class OneIntraOpThread {
 public:
  OneIntraOpThread() : before_(at::get_num_threads()) { openmp_set_num_threads()(1); }
  ~OneIntraOpThread() { openmp_set_num_threads()(before_); }
  OneIntraOpThread(const OneIntraOpThread&) = delete;
  OneIntraOpThread& operator=(const OneIntraOpThread&) = delete;

 private:
  int before_;
};

// Runs one lane's task with one intra-op thread; an exception is kept for the caller.
std::exception_ptr run_task(const std::function<void(std::int64_t)>& task, std::int64_t index) {
  try {
    OneIntraOpThread one;
    task(index);
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

// The threads lanes 1, 2, ... run on, started on first use and kept for the process: a new thread's
// first LibTorch query sets its OpenMP team from the process-wide count and re-creates LibTorch's shared
// pthreadpool, which a kept thread does once. Never destroyed (the threads wait on the condition
// variable until the process exits), so no exit-time order with LibTorch's own statics matters.
class LaneThreads {
 public:
  static LaneThreads& instance() {
    static auto* threads = new LaneThreads;
    return *threads;
  }

  // Hands tasks[i] to kept thread i; wait() returns when every task has run. `tasks` must outlive it.
  void start(const std::vector<std::function<void()>>& tasks) {
    std::unique_lock lock(mutex_);
    while (threads_.size() < tasks.size()) {
      threads_.emplace_back([this, index = threads_.size()] { serve(index); });
    }
    // A new thread's first query re-creates the shared pthreadpool: let it happen before any lane runs.
    done_.wait(lock, [&] { return ready_ == threads_.size(); });
    tasks_ = &tasks;
    pending_ = tasks.size();
    ++generation_;
    wake_.notify_all();
  }

  void wait() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    tasks_ = nullptr;
  }

 private:
  void serve(std::size_t index) {
    at::get_num_threads();
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    ++ready_;
    done_.notify_all();
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (tasks_ == nullptr || index >= tasks_->size()) continue;
      const auto& task = (*tasks_)[index];
      lock.unlock();
      task();
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::vector<std::function<void()>>* tasks_ = nullptr;
  std::size_t ready_ = 0;  // threads past their first LibTorch query
  std::size_t pending_ = 0;
  std::uint64_t generation_ = 0;
};

// Tasks 0..n-1 side by side: the calling thread runs task 0, n - 1 kept threads the others (carrying the
// caller's LibTorch thread-local state, e.g. grad mode). Each task's exception, or null.
std::vector<std::exception_ptr> run_wave(const std::function<void(std::int64_t)>& task, std::int64_t n) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  const at::ThreadLocalState state;
  std::vector<std::function<void()>> others;
  for (std::int64_t i = 1; i < n; ++i) {
    others.emplace_back([&, i] {
      at::ThreadLocalStateGuard guard(state);
      errors[static_cast<std::size_t>(i)] = run_task(task, i);
    });
  }
  // One wave at a time in the process: the kept threads serve one wave at once.
  static std::mutex one_wave;
  const std::lock_guard wave(one_wave);
  auto& threads = LaneThreads::instance();
  threads.start(others);
  errors[0] = run_task(task, 0);
  threads.wait();
  return errors;
}

// OpenBLAS at one thread while lanes run (each lane calls it on its own thread), then back.
class OneBlasThread {
 public:
  explicit OneBlasThread(int restore) : restore_(restore) { set_blas_threads(1); }
  ~OneBlasThread() { set_blas_threads(restore_); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int restore_;
};

}  // namespace

int micro_batch_lanes(int threads, std::int64_t micro_batches, const torch::Device& device) {
  if (!device.is_cpu() || threads < 2 || micro_batches < 2 || !per_thread_intra_op()) return 1;
  return static_cast<int>(std::min<std::int64_t>(threads, micro_batches));
}

void run_side_by_side(int lanes, int threads, std::int64_t count, const std::function<void(std::int64_t)>& job) {
  if (lanes < 2) {
    for (std::int64_t i = 0; i < count; ++i) job(i);
    return;
  }
  for (std::int64_t first = 0; first < count; first += lanes) {
    const auto n = std::min<std::int64_t>(lanes, count - first);
    std::vector<std::exception_ptr> errors;
    {
      OneBlasThread blas(threads);
      errors = run_wave([&](std::int64_t i) { job(first + i); }, n);
    }
    for (const auto& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }
}

void run_in_lanes(int lanes, int threads, std::int64_t count, const MicroBatchJob& job,
                  const std::function<bool(std::int64_t, MicroBatchGradient&)>& consume) {
  if (lanes < 2) {
    for (std::int64_t i = 0; i < count; ++i) {
      auto result = job(i, false);
      if (!consume(i, result)) return;
    }
    return;
  }
  for (std::int64_t first = 0; first < count; first += lanes) {
    const auto n = std::min<std::int64_t>(lanes, count - first);
    std::vector<std::optional<MicroBatchGradient>> results(static_cast<std::size_t>(n));
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
    run_side_by_side(lanes, threads, n, [&](std::int64_t i) {
      try {
        results[static_cast<std::size_t>(i)] = job(first + i, true);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
    for (std::int64_t i = 0; i < n; ++i) {
      if (errors[static_cast<std::size_t>(i)]) std::rethrow_exception(errors[static_cast<std::size_t>(i)]);
      if (!consume(first + i, *results[static_cast<std::size_t>(i)])) return;
    }
  }
}

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model.parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

std::vector<torch::Tensor> backward_micro_batch(const torch::Tensor& objective,
                                                const std::vector<torch::Tensor>& parameters, bool apart) {
  if (!apart) {
    objective.backward();
    return {};
  }
  return torch::autograd::grad({objective}, parameters, /*grad_outputs=*/{}, /*retain_graph=*/false,
                               /*create_graph=*/false, /*allow_unused=*/true);
}

void accumulate_gradients(const std::vector<torch::Tensor>& parameters, std::vector<torch::Tensor>& gradients) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < gradients.size(); ++i) {
    auto& g = gradients[i];
    if (!g.defined()) continue;
    auto& grad = const_cast<torch::Tensor&>(parameters[i]).mutable_grad();
    if (grad.defined())
      grad.add_(g);
    else
      grad = g.detach();
    g.reset();
  }
}

}  // namespace k3lab::train
