#include "k3lab/core/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <mutex>

#include <spdlog/spdlog.h>

namespace k3lab::core {
namespace {

// The terminal is shared by the bar and log lines: one lock, and the bar's last text for redraws.
struct Terminal {
  std::mutex mutex;
  std::string bar;  // the live bar's line, empty when none is drawn
  std::size_t batch_index = 0, batch_count = 0;
  std::chrono::steady_clock::time_point batch_start;
};

Terminal& terminal() {
  static Terminal t;
  return t;
}

std::string format_seconds(double s) {
  if (s < 0 || s != s) return "?";
  char text[32];
  const long total = static_cast<long>(s + 0.5);
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldm%02lds", total / 60, total % 60);
  }
  return text;
}

std::string format_rate(double units, double seconds) {
  if (units <= 0 || seconds <= 0) return "? unit/s";
  char text[32];
  const double rate = units / seconds;
  if (rate >= 1) {
    std::snprintf(text, sizeof text, "%.3g unit/s", rate);
  } else {
    std::snprintf(text, sizeof text, "%.3g s/unit", 1 / rate);
  }
  return text;
}

std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// Clears the bar's line; the caller holds the lock.
void clear_bar(const Terminal& t) {
  if (!t.bar.empty()) std::fputs("\r\x1b[K", stderr);
}

}  // namespace

std::string fit_progress_line(const std::string& label, double fraction, const std::string& counts,
                              std::size_t columns) {
  constexpr std::size_t kMinimumBar = 10;
  const std::size_t limit = columns > 1 ? columns - 1 : 1;  // the last column would wrap on some terminals
  const std::size_t fixed = label.size() + 3 + counts.size() + 1;  // "label [" + "] " + counts
  std::string line;
  if (fixed + kMinimumBar <= limit) {
    const std::size_t width = limit - fixed;
    const double clamped = fraction < 0 ? 0 : (fraction > 1 ? 1 : fraction);
    const auto filled = static_cast<std::size_t>(clamped * static_cast<double>(width));
    line = label + " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + counts;
  } else {
    line = label + " " + counts;
  }
  if (line.size() > limit) line.resize(limit);
  return line;
}

void set_progress_batch(std::size_t index, std::size_t count) {
  Terminal& t = terminal();
  std::lock_guard lock(t.mutex);
  if (index <= 1 || t.batch_count == 0) t.batch_start = std::chrono::steady_clock::now();
  t.batch_index = index;
  t.batch_count = count;
}

void print_above_progress(std::FILE* stream, const std::string& line) {
  Terminal& t = terminal();
  std::lock_guard lock(t.mutex);
  clear_bar(t);
  std::fflush(stderr);
  std::fputs(line.c_str(), stream);
  if (line.empty() || line.back() != '\n') std::fputc('\n', stream);
  std::fflush(stream);
  if (!t.bar.empty()) {
    std::fputs(t.bar.c_str(), stderr);
    std::fflush(stderr);
  }
}

Progress::Progress(std::string label, std::size_t total, std::size_t already_done)
    : label_(std::move(label)),
      total_(total),
      done_(already_done),
      done_at_start_(already_done),
      tty_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  draw(true);
}

Progress::~Progress() { finish(); }

void Progress::advance(std::size_t n) {
  done_ += n;
  partial_ = 0;
  draw(false);
}

void Progress::within_unit(double fraction) {
  partial_ = fraction < 0 ? 0 : (fraction > 1 ? 1 : fraction);
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  draw(true);
  finished_ = true;
  if (!tty_) return;
  Terminal& t = terminal();
  std::lock_guard lock(t.mutex);
  t.bar.clear();  // the final bar stays on screen as a line of its own
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  if (finished_ || (!force && since_draw < (tty_ ? 0.2 : 10.0))) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double progressed = static_cast<double>(done_ - done_at_start_) + partial_;
  const double remaining = static_cast<double>(total_) - static_cast<double>(done_) - partial_;
  const double eta = progressed > 0 ? elapsed / progressed * remaining : -1;
  const double fraction = total_ ? (static_cast<double>(done_) + partial_) / static_cast<double>(total_) : 1.0;
  Terminal& t = terminal();
  std::unique_lock lock(t.mutex);
  std::string label = label_;
  std::string batch;
  if (t.batch_count > 1) {
    label = "[" + std::to_string(t.batch_index) + "/" + std::to_string(t.batch_count) + "] " + label_;
    batch = "  total " + format_seconds(std::chrono::duration<double>(now - t.batch_start).count());
  }
  const std::string counts = std::to_string(done_) + "/" + std::to_string(total_) + " units  " +
                             format_rate(progressed, elapsed) + "  elapsed " + format_seconds(elapsed) + "  ETA " +
                             format_seconds(eta) + batch;
  if (tty_) {
    t.bar = "\r" + fit_progress_line(label, fraction, counts, terminal_columns()) + "\x1b[K";
    std::fputs(t.bar.c_str(), stderr);
    std::fflush(stderr);
    return;
  }
  lock.unlock();  // the log line goes through the terminal logger, which takes the lock itself
  spdlog::info("{}: {} ({:.1f}%)", label, counts, 100.0 * fraction);
}

}  // namespace k3lab::core
