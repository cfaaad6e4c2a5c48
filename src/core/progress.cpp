#include "k3lab/core/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <spdlog/spdlog.h>

namespace k3lab::core {
namespace {
std::string format_seconds(double s) {
  if (s < 0 || s != s) return "?";
  char text[32];
  const long total = static_cast<long>(s + 0.5);
  if (total >= 3600) std::snprintf(text, sizeof text, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  else std::snprintf(text, sizeof text, "%ldm%02lds", total / 60, total % 60);
  return text;
}
}  // namespace

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
  finished_ = true;
  draw(true);
  if (tty_) std::fputc('\n', stderr);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since_draw < (tty_ ? 0.2 : 10.0)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double progressed = static_cast<double>(done_ - done_at_start_) + partial_;
  const double remaining = static_cast<double>(total_) - static_cast<double>(done_) - partial_;
  const double eta = progressed > 0 ? elapsed / progressed * remaining : -1;
  const double fraction = total_ ? (static_cast<double>(done_) + partial_) / static_cast<double>(total_) : 1.0;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %zu/%zu units  elapsed %s  ETA %s   ", label_.c_str(), bar.c_str(), done_,
                 total_, format_seconds(elapsed).c_str(), format_seconds(eta).c_str());
    std::fflush(stderr);
  } else {
    spdlog::info("{}: {}/{} units ({:.1f}%), elapsed {}, ETA {}", label_, done_, total_, 100.0 * fraction,
                 format_seconds(elapsed), format_seconds(eta));
  }
}

}  // namespace k3lab::core
