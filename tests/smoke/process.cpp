#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace k3lab::testing {

ProcessResult run_k3lab(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                        const std::map<std::string, std::string>& env, std::chrono::milliseconds kill_after,
                        const std::function<bool()>& started) {
  const auto log = std::filesystem::temp_directory_path() / ("k3lab-smoke-" + std::to_string(::getpid()) + ".log");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    std::string binary = K3LAB_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ProcessResult result;
  int status = 0;
  if (kill_after.count() > 0) {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (!started) deadline = std::chrono::steady_clock::now() + kill_after;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (!deadline && started()) deadline = std::chrono::steady_clock::now() + kill_after;
      if (deadline && std::chrono::steady_clock::now() >= *deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::filesystem::remove(log);
  return result;
}

std::filesystem::path copy_protocols(const std::filesystem::path& dir) {
  const auto target = dir / "experiments";
  std::filesystem::create_directories(target);
  std::filesystem::copy(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments", target,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  return target;
}

std::map<std::string, std::string> read_tree(const std::filesystem::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[std::filesystem::relative(entry.path(), root).string()] = bytes.str();
  }
  return files;
}

}  // namespace k3lab::testing
