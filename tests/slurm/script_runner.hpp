#pragma once
// Runs a generated sbatch script with bash as one array task would, with a stand-in k3lab binary
// that prints its arguments: the script's meaning is checked by bash itself, not by string matching.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "k3lab/exec/command.hpp"

namespace k3lab::testing {

// A stand-in k3lab: prints each argument on its own line, NUL-free.
inline std::filesystem::path write_argument_printer(const std::filesystem::path& dir) {
  const auto path = dir / "fake-k3lab";
  std::ofstream(path) << "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

struct TaskRun {
  int exit_code = -1;
  std::vector<std::string> arguments;  // what the task passed to k3lab
  std::string err;
};

// `extra_env` holds NAME=value items set for the task (e.g. a PATH with stand-in srun/scontrol).
inline TaskRun run_array_task(const std::filesystem::path& script, const std::string& job_id, std::size_t task,
                              const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> command = {"env", "SLURM_ARRAY_JOB_ID=" + job_id, "SLURM_ARRAY_TASK_ID=" + std::to_string(task)};
  command.insert(command.end(), extra_env.begin(), extra_env.end());
  command.insert(command.end(), {"bash", script.string()});
  const auto result = k3lab::exec::run_command(command);
  TaskRun run;
  run.exit_code = result.exit_code;
  run.err = result.err;
  std::string line;
  for (char c : result.out) {
    if (c == '\n') {
      run.arguments.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return run;
}

}  // namespace k3lab::testing
