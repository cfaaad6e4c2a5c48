#include "common/k3lab_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "common/files.hpp"
#include "common/temp_dir.hpp"

extern char** environ;

namespace k3lab::testing {
namespace {

// The child's environment: ours with `changes` applied, as KEY=VALUE strings.
std::vector<std::string> child_environment(const std::map<std::string, std::optional<std::string>>& changes) {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!changes.count(entry.substr(0, entry.find('=')))) entries.push_back(entry);
  }
  for (const auto& [name, value] : changes) {
    if (value) entries.push_back(name + "=" + *value);
  }
  return entries;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Waits for `pid`, killing it `kill_after` after `started()` first holds (or after launch).
int wait_for(pid_t pid, const ProcessOptions& options) {
  int status = 0;
  if (options.kill_after.count() <= 0) {
    ::waitpid(pid, &status, 0);
    return status;
  }
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (!options.started) deadline = std::chrono::steady_clock::now() + options.kill_after;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    if (!deadline && options.started()) deadline = std::chrono::steady_clock::now() + options.kill_after;
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

std::filesystem::path k3lab_binary() {
  if (const char* env = std::getenv("K3LAB_BINARY"); env && *env) return env;
#ifdef K3LAB_BINARY
  return K3LAB_BINARY;
#else
  throw std::runtime_error("no k3lab binary: set K3LAB_BINARY to its path");
#endif
}

ProcessResult run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                          const ProcessOptions& options) {
  if (!std::filesystem::exists(program)) {
    throw std::runtime_error(program.string() + " does not exist: build it (cmake --build build --target k3lab) or "
                             "set K3LAB_BINARY to a built k3lab");
  }
  const TempDir capture("k3lab-process");
  const auto out_file = capture / "stdout";
  const auto err_file = capture / "stderr";
  // Absolute, because the child changes folder before it starts the program.
  std::vector<std::string> argv_strings{std::filesystem::absolute(program).string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  auto env_strings = child_environment(options.env);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // only async-signal-safe calls from here on
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) ::_exit(126);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  const int status = wait_for(pid, options);
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (std::filesystem::exists(out_file)) result.out = read_file(out_file);
  if (std::filesystem::exists(err_file)) result.err = read_file(err_file);
  return result;
}

ProcessOptions with_passive_openmp(ProcessOptions options) {
  options.env.emplace("OMP_WAIT_POLICY", "PASSIVE");  // emplace: a test's own value, or its unset, stays
  options.env.emplace("GOMP_SPINCOUNT", "10000");
  return options;
}

ProcessResult run_k3lab(const std::vector<std::string>& args, const ProcessOptions& options) {
  return run_program(k3lab_binary(), args, with_passive_openmp(options));
}

std::string command_line(const std::vector<std::string>& args) {
  std::string line = "k3lab";
  for (const auto& a : args) line += " " + a;
  return line;
}

}  // namespace k3lab::testing
