#pragma once
// Runs the k3lab binary (or any program) as a child process with captured stdout, stderr and exit
// status; optionally kills it with SIGKILL after a delay, to test interrupted runs.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3lab::testing {

struct ProcessOptions {
  std::filesystem::path cwd;                                // empty: the test's working folder
  std::map<std::string, std::optional<std::string>> env;    // set these; nullopt unsets one
  std::chrono::milliseconds kill_after{0};                  // > 0: SIGKILL that long after `started`
  std::function<bool()> started;                            // polled every ms; unset: from launch
};

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;     // stdout
  std::string err;     // stderr
  std::string output() const { return out + err; }
};

// $K3LAB_BINARY when set (to test another build, e.g. the one before a change), else the k3lab this
// test suite was built with.
std::filesystem::path k3lab_binary();

// Runs `program args...`. Throws when `program` does not exist.
ProcessResult run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                          const ProcessOptions& options = {});

// `options` with OMP_WAIT_POLICY=PASSIVE and GOMP_SPINCOUNT=10000 unless it sets or unsets them: the
// policy that `run` and `bench` otherwise restart themselves with (core/thread_policy.cpp), recorded the
// same, without loading LibTorch a second time (about 0.5 s of each training start). Tests of the restart
// itself unset OMP_WAIT_POLICY (ThreadPolicyCli, SignalDuringStartUp).
ProcessOptions with_passive_openmp(ProcessOptions options);

// Runs `k3lab_binary() args...` with_passive_openmp(options).
ProcessResult run_k3lab(const std::vector<std::string>& args, const ProcessOptions& options = {});

// "k3lab run x --profile smoke": the arguments as one line, for failure messages.
std::string command_line(const std::vector<std::string>& args);

}  // namespace k3lab::testing
