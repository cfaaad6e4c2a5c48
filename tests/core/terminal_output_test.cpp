// The progress bar as a terminal shows it (a pseudo-terminal stands in for the user's): it fits the
// width, follows a resize, and a log line printed meanwhile goes above it without breaking it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/core/progress.hpp"
#include "k3lab/core/terminal_log.hpp"

namespace {

// stderr redirected to a pseudo-terminal of `columns` for the object's lifetime; read() drains what
// was written to it.
class PseudoTerminal {
 public:
  explicit PseudoTerminal(unsigned short columns) {
    winsize size{};
    size.ws_col = columns;
    size.ws_row = 24;
    if (openpty(&master_, &slave_, nullptr, nullptr, &size) != 0) throw std::runtime_error("openpty failed");
    fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK);
    std::fflush(stderr);
    saved_stderr_ = dup(STDERR_FILENO);
    dup2(slave_, STDERR_FILENO);
  }
  ~PseudoTerminal() {
    std::fflush(stderr);
    dup2(saved_stderr_, STDERR_FILENO);
    close(saved_stderr_);
    close(slave_);
    close(master_);
  }
  void resize(unsigned short columns) {
    winsize size{};
    size.ws_col = columns;
    size.ws_row = 24;
    ioctl(master_, TIOCSWINSZ, &size);
  }
  std::string read() {
    std::fflush(stderr);
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::read(master_, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
    return out;
  }
  int slave() const { return slave_; }

 private:
  int master_ = -1, slave_ = -1, saved_stderr_ = -1;
};

// The visible text of each "\r...\x1b[K" redraw in `output`.
std::vector<std::string> bar_lines(const std::string& output) {
  std::vector<std::string> lines;
  for (std::size_t at = output.find('\r'); at != std::string::npos; at = output.find('\r', at + 1)) {
    const auto end = output.find("\x1b[K", at);
    if (end != std::string::npos && end > at + 1) lines.push_back(output.substr(at + 1, end - at - 1));
  }
  return lines;
}

}  // namespace

TEST(ProgressLine, FitsTheColumnsAndDropsTheBarBeforeTheCounts) {
  const std::string counts = "3/9 units  2 unit/s  elapsed 0m02s  ETA 0m03s";
  const auto wide = k3lab::core::fit_progress_line("memory-pool", 1.0 / 3, counts, 100);
  EXPECT_EQ(wide.size(), 99u) << wide;
  EXPECT_EQ(wide.rfind("memory-pool [", 0), 0u);
  const auto bar = wide.substr(13, wide.find(']') - 13);
  EXPECT_EQ(bar.size(), 99u - (11 + 3 + counts.size() + 1));
  EXPECT_EQ(bar.find('.'), bar.size() / 3) << "a third of the bar is filled: " << bar;
  // Too narrow for a bar of 10: label and counts only; narrower still: cut, never wrapped.
  EXPECT_EQ(k3lab::core::fit_progress_line("memory-pool", 0.5, counts, 65), "memory-pool " + counts);
  EXPECT_EQ(k3lab::core::fit_progress_line("memory-pool", 0.5, counts, 30).size(), 29u);
}

TEST(ProgressOnATerminal, FollowsAResizeAndKeepsLogLinesAboveTheBar) {
  PseudoTerminal tty(60);
  {
    k3lab::core::Progress progress("memory-pool", 4);
    auto first = bar_lines(tty.read());
    ASSERT_FALSE(first.empty());
    EXPECT_LE(first.back().size(), 59u) << first.back();
    EXPECT_NE(first.back().find("0/4 units"), std::string::npos) << first.back();

    tty.resize(120);
    progress.finish();  // a forced redraw at the new width
  }
  const auto resized = bar_lines(tty.read());
  ASSERT_FALSE(resized.empty());
  EXPECT_GT(resized.back().size(), 59u) << "the bar grows with the terminal: " << resized.back();
  EXPECT_LE(resized.back().size(), 119u);

  // A log line written while a bar is live: the bar is cleared, the line printed, the bar redrawn.
  FILE* log = fdopen(dup(tty.slave()), "w");
  ASSERT_NE(log, nullptr);
  {
    k3lab::core::Progress progress("router-balance", 2);
    tty.read();
    k3lab::core::print_above_progress(log, "[12:00:00] [info] a log line");
    const std::string output = tty.read();
    const auto clear = output.find("\r\x1b[K");
    const auto line = output.find("[12:00:00] [info] a log line");
    ASSERT_NE(clear, std::string::npos) << output;
    ASSERT_NE(line, std::string::npos) << output;
    EXPECT_LT(clear, line);
    const auto redrawn = output.find("router-balance [", line);
    EXPECT_NE(redrawn, std::string::npos) << "the bar comes back under the line: " << output;
  }
  std::fclose(log);
}

TEST(ProgressOnATerminal, ABatchPrefixesTheBarWithItsPlace) {
  PseudoTerminal tty(100);
  k3lab::core::set_progress_batch(2, 8);
  {
    k3lab::core::Progress progress("attn-res", 3);
  }
  k3lab::core::set_progress_batch(0, 0);
  const auto lines = bar_lines(tty.read());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().rfind("[2/8] attn-res [", 0), 0u) << lines.front();
  EXPECT_NE(lines.front().find("total 0m"), std::string::npos) << lines.front();
}

// Colour only on a terminal, and never when NO_COLOR is set to anything non-empty (no-color.org).
TEST(TerminalLog, ColourOnlyOnATerminalWithoutNoColor) {
  const char* before = std::getenv("NO_COLOR");
  const std::string saved = before ? before : "";
  unsetenv("NO_COLOR");
  EXPECT_FALSE(k3lab::core::log_colour_wanted()) << "stdout of a test is not a terminal";
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  std::fflush(stdout);
  const int saved_stdout = dup(STDOUT_FILENO);
  dup2(slave, STDOUT_FILENO);
  const bool plain_terminal = k3lab::core::log_colour_wanted();
  setenv("NO_COLOR", "1", 1);
  const bool no_color = k3lab::core::log_colour_wanted();
  setenv("NO_COLOR", "", 1);
  const bool empty_no_color = k3lab::core::log_colour_wanted();
  dup2(saved_stdout, STDOUT_FILENO);
  close(saved_stdout);
  close(slave);
  close(master);
  if (before) setenv("NO_COLOR", saved.c_str(), 1); else unsetenv("NO_COLOR");
  EXPECT_TRUE(plain_terminal);
  EXPECT_FALSE(no_color);
  EXPECT_TRUE(empty_no_color) << "an empty NO_COLOR does not count (no-color.org)";
}
