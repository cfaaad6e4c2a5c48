// core::survive_broken_pipes: a write to a socket whose other end is gone fails with EPIPE instead of
// killing the process, and a program the process then execs gets SIGPIPE's default back.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "k3lab/core/broken_pipe.hpp"

namespace {

// In a child process (the test binary's own dispositions stay untouched): `prepare`, then one write to a
// socket whose peer is closed. Returns the child's wait status.
template <typename Prepare>
int status_after_broken_write(Prepare prepare) {
  const pid_t child = ::fork();
  if (child == 0) {
    prepare();
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) ::_exit(90);
    ::close(ends[1]);
    const char byte = 'x';
    const ssize_t written = ::write(ends[0], &byte, 1);
    ::_exit(written == -1 && errno == EPIPE ? 0 : 91);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

TEST(BrokenPipe, WithoutTheHandlerAWriteToAClosedPeerKillsTheProcess) {
  const int status = status_after_broken_write([] { ::signal(SIGPIPE, SIG_DFL); });
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGPIPE);
}

TEST(BrokenPipe, WithTheHandlerTheWriteFailsWithEpipeAndTheProcessLivesOn) {
  const int status = status_after_broken_write([] {
    ::signal(SIGPIPE, SIG_DFL);
    k3lab::core::survive_broken_pipes();
  });
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "90: no socketpair; 91: the write did not fail with EPIPE";
}

TEST(BrokenPipe, AProgramStartedAfterwardsGetsTheDefaultDisposition) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    k3lab::core::survive_broken_pipes();
    // With the default disposition the shell dies of its own SIGPIPE; had it inherited SIG_IGN, it would
    // exit 0.
    ::execl("/bin/sh", "sh", "-c", "kill -PIPE $$; exit 0", static_cast<char*>(nullptr));
    ::_exit(92);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the exec'd shell survived its SIGPIPE (status " << status << ")";
  EXPECT_EQ(WTERMSIG(status), SIGPIPE);
}

}  // namespace
