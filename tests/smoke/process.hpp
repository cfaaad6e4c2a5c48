#pragma once
// Runs the k3lab binary as a child process (optionally killing it with SIGKILL after a delay).
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace k3lab::testing {

struct ProcessResult {
  int exit_code = -1;   // -1 when killed by a signal
  int signal = 0;
  std::string output;   // stdout and stderr together
};

// Runs `K3LAB_BINARY args...` in `cwd` with extra environment variables. With kill_after > 0 it
// sends SIGKILL that long after `started()` first returns true (polled every millisecond; unset:
// from launch), so process start-up time does not shift the kill point.
ProcessResult run_k3lab(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                        const std::map<std::string, std::string>& env = {},
                        std::chrono::milliseconds kill_after = std::chrono::milliseconds::zero(),
                        const std::function<bool()>& started = {});

// Copies the repository's protocol files (and freeze records) into `dir`/experiments.
std::filesystem::path copy_protocols(const std::filesystem::path& dir);

// Concatenated bytes of every file under `root`, keyed by relative path.
std::map<std::string, std::string> read_tree(const std::filesystem::path& root);

}  // namespace k3lab::testing
