#include "k3lab/core/provenance.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "k3lab/build_info.hpp"

namespace k3lab::core {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a read-only git query; empty on any failure (no git, not a repository).
std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 256> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
  if (pclose(pipe) != 0) return {};
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The calendar fields of the whole second that `time` falls in, in UTC.
std::tm utc_fields(std::chrono::system_clock::time_point time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time.time_since_epoch());
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

std::string format_fields(const std::tm& tm, const char* format) {
  char text[64];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

}  // namespace

SourceRevision source_revision(const std::filesystem::path& inside_tree, const std::filesystem::path& not_code) {
  SourceRevision rev;
  const std::string dir = shell_quote(inside_tree.string());
  std::string head = capture("git -C " + dir + " rev-parse HEAD 2>/dev/null");
  if (head.empty()) return rev;
  rev.revision = head;
  // Untracked run outputs are ignored by .gitignore; anything else uncommitted makes the tree dirty.
  const std::string excluded =
      not_code.empty() ? std::string() : " -- . " + shell_quote(":(exclude)" + std::filesystem::absolute(not_code).string());
  rev.dirty = !capture("git -C " + dir + " status --porcelain --untracked-files=no" + excluded + " 2>/dev/null").empty();
  return rev;
}

std::string format_utc(std::chrono::system_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                          since_epoch - std::chrono::floor<std::chrono::seconds>(since_epoch))
                          .count();
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(millis));
  return format_fields(utc_fields(time), "%Y-%m-%dT%H:%M:%S") + fraction;
}

std::string format_utc_seconds(std::chrono::system_clock::time_point time) {
  return format_fields(utc_fields(time), "%Y-%m-%dT%H:%M:%SZ");
}

std::string utc_now_iso() { return format_utc(std::chrono::system_clock::now()); }

std::string utc_now_compact() { return format_fields(utc_fields(std::chrono::system_clock::now()), "%Y%m%d-%H%M%S"); }

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

nlohmann::json provenance(const std::filesystem::path& inside_tree, const std::vector<std::string>& argv) {
  SourceRevision rev = source_revision(inside_tree);
  nlohmann::json j;
  if (rev.revision == SourceRevision{}.revision) {
    // The protocols were copied out of the checkout: the tree this binary was built from names the code.
    rev = source_revision(build::kSourceDir);
    j["source_revision_from"] = rev.revision == SourceRevision{}.revision ? std::string("none: neither ") + inside_tree.string() +
                                                           " nor the build's source tree " + build::kSourceDir +
                                                           " is a git checkout"
                                                     : std::string("the build's source tree ") + build::kSourceDir;
  }
  j["source_revision"] = rev.revision;
  j["source_dirty"] = rev.dirty;
  j["k3lab_version"] = build::kVersion;
  j["build"] = build::kInfo;
  j["host"] = host_name();
  j["cpu"] = cpu_model();
  j["cpu_cores"] = static_cast<long>(sysconf(_SC_NPROCESSORS_ONLN));
  j["command_line"] = argv;
  j["started_at"] = utc_now_iso();
  return j;
}

}  // namespace k3lab::core
