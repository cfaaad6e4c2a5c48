#pragma once
// Running the scheduler's command-line tools (sbatch, sacct, scontrol) as child processes. Every
// Slurm interaction goes through a CommandRunner so that tests can answer with canned outputs.
#include <functional>
#include <string>
#include <vector>

namespace k3lab::exec {

struct CommandResult {
  int exit_code = -1;      // the program's exit status; 128 + N when it died by signal N
  bool not_found = false;  // the program is not on PATH (the scheduler's tools are not installed)
  std::string out;
  std::string err;
};

using CommandRunner = std::function<CommandResult(const std::vector<std::string>& argv)>;

// Runs argv[0] (looked up on PATH) with stdin from /dev/null, capturing stdout and stderr.
CommandResult run_command(const std::vector<std::string>& argv);

// "sbatch --parsable x.sh" for messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace k3lab::exec
