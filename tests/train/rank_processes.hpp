#pragma once
// Starting the ranks of a data-parallel test as real processes: a free loopback port for the
// rendezvous, the torchrun-style environment, and waiting for them all with a deadline (a rank that
// outlives it is hung: it is killed and the test fails).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace k3lab::train::testing {

inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("cannot bind a loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR (loopback), MASTER_PORT, a 10 s group timeout, one thread.
inline std::map<std::string, std::string> rank_environment(int rank, int world, int port) {
  return {{"RANK", std::to_string(rank)},  {"LOCAL_RANK", std::to_string(rank)}, {"WORLD_SIZE", std::to_string(world)},
          {"MASTER_ADDR", "127.0.0.1"},     {"MASTER_PORT", std::to_string(port)}, {"K3LAB_DIST_TIMEOUT", "10"},
          {"OMP_NUM_THREADS", "1"}};
}

// Starts `program args...` with this process's environment plus `vars`; stdout and stderr go to `log`.
inline pid_t start_process(const std::string& program, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& vars, const std::filesystem::path& log) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!vars.count(entry.substr(0, entry.find('=')))) entries.push_back(entry);
  }
  for (const auto& [k, v] : vars) entries.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = {program};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("cannot start " + program);
  return pid;
}

struct ProcessExit {
  int code = -1;   // exit status when it exited
  int signal = 0;  // the signal that ended it, else 0
};

// Waits for every process; `poll` runs every few milliseconds meanwhile (e.g. to kill one on a cue).
inline std::vector<ProcessExit> wait_all(const std::vector<pid_t>& pids, std::chrono::seconds deadline,
                                         const std::function<void()>& poll = {}) {
  std::vector<ProcessExit> exits(pids.size());
  std::vector<bool> done(pids.size(), false);
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (std::size_t finished = 0; finished < pids.size();) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (done[i] || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = true;
      ++finished;
      if (WIFEXITED(status)) exits[i].code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) exits[i].signal = WTERMSIG(status);
    }
    if (finished == pids.size()) break;
    if (std::chrono::steady_clock::now() > until) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        ::kill(pids[i], SIGKILL);
        ::waitpid(pids[i], nullptr, 0);
      }
      ADD_FAILURE() << "a rank did not finish within " << deadline.count() << " s (a hung collective?)";
      break;
    }
    if (poll) poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exits;
}

}  // namespace k3lab::train::testing
