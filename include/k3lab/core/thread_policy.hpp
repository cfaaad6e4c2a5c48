#pragma once
// One thread policy for the whole process (issue 19): how many cores k3lab keeps busy, chosen once from
// --threads (default: the cores its CPU affinity allows). LibTorch's intra-op pool and the BLAS pool both
// get that many threads and LibTorch's inter-op pool one (train::apply_thread_policy), and OpenMP's idle
// workers spin only briefly, then sleep (OMP_WAIT_POLICY=passive with GOMP_SPINCOUNT=10000), because a
// spinning LibTorch worker takes the core an OpenBLAS thread needs (measured 0.46x the tokens/s at 2
// threads on 2 cores with the default spinning), while an immediately sleeping one makes every small
// parallel operator pay a wake-up. On the CPU the trainer gives the threads to a step's micro-batches
// instead where it can (train/micro_batch_lanes.hpp): one micro-batch per thread, each with one intra-op
// and one BLAS thread. The manifest, `bench` and `--version` show it.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct ThreadPolicy {
  int threads = 1;
  std::string source;  // "--threads" or "CPU affinity"

  // {threads, source, openmp_wait_policy, openmp_spin_count}: what a manifest or benchmark records.
  nlohmann::json to_json() const;
};

// The cores sched_getaffinity allows this process (at least 1).
int affinity_cores();

// `requested` threads when positive, else affinity_cores().
ThreadPolicy choose_thread_policy(int requested);

// OMP_WAIT_POLICY and GOMP_SPINCOUNT as the OpenMP runtime read them when it loaded (before main):
// "unset" when absent.
std::string openmp_wait_policy();
std::string openmp_spin_count();

// OpenMP reads OMP_WAIT_POLICY once, when its runtime loads before main, so k3lab cannot change it from
// inside. When it is unset, this sets it to PASSIVE (and GOMP_SPINCOUNT to 10000 unless the user set
// it) and executes this program again (/proc/self/exe,
// the same arguments and pid); it returns only when nothing needed doing (the variable is set, e.g. by
// the user or by the first execution) or when the re-execution failed (the reason is returned then).
std::optional<std::string> restart_with_passive_openmp(char** argv);

}  // namespace k3lab::core
