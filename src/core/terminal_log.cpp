#include "k3lab/core/terminal_log.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "k3lab/core/progress.hpp"

namespace k3lab::core {
namespace {

const char* level_colour(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return "\x1b[36m";
    case spdlog::level::info: return "\x1b[32m";
    case spdlog::level::warn: return "\x1b[33m\x1b[1m";
    case spdlog::level::err:
    case spdlog::level::critical: return "\x1b[31m\x1b[1m";
    default: return "";
  }
}

class AboveProgressSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AboveProgressSink(bool colour) : colour_(colour) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string line(formatted.data(), formatted.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (colour_ && msg.color_range_end > msg.color_range_start && msg.color_range_end <= line.size()) {
      line.insert(msg.color_range_end, "\x1b[0m");
      line.insert(msg.color_range_start, level_colour(msg.level));
    }
    print_above_progress(stdout, line);
  }
  void flush_() override { std::fflush(stdout); }

 private:
  bool colour_;
};

}  // namespace

bool log_colour_wanted() {
  const char* no_colour = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) == 1 && (no_colour == nullptr || *no_colour == '\0');
}

std::shared_ptr<spdlog::logger> make_terminal_logger() {
  return std::make_shared<spdlog::logger>("k3lab", std::make_shared<AboveProgressSink>(log_colour_wanted()));
}

}  // namespace k3lab::core
