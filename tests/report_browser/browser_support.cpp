// Headless Chromium and the browser-free checks of the HTML report test (browser_support.hpp).
#include "browser_support.hpp"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/files.hpp"

namespace k3lab::testing {

namespace {

std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string decode_entities(std::string text) {
  const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"},  {"&gt;", ">"},   {"&quot;", "\""},
                                                          {"&#39;", "'"}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, character] : entities) {
    for (auto at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, std::string(entity).size(), character);
    }
  }
  return text;
}

bool has_scheme(const std::string& target) {
  static const std::regex scheme("^[A-Za-z][A-Za-z0-9+.-]*:");
  return std::regex_search(target, scheme);
}

}  // namespace

std::optional<std::filesystem::path> find_chromium() {
  if (const char* configured = std::getenv("K3LAB_CHROMIUM"); configured && *configured) {
    return std::filesystem::exists(configured) ? std::optional<std::filesystem::path>(configured) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "/usr/bin:/bin");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const auto candidate = std::filesystem::path(folder) / name;
      if (!folder.empty() && std::filesystem::exists(candidate)) return candidate;
    }
  }
  return std::nullopt;
}

std::string file_url(const std::filesystem::path& file) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string url = "file://";
  for (const char c : std::filesystem::absolute(file).lexically_normal().string()) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-._~/").find(c) != std::string_view::npos;
    if (keep) {
      url += c;
    } else {
      url += '%';
      url += kHex[static_cast<unsigned char>(c) >> 4];
      url += kHex[static_cast<unsigned char>(c) & 0x0F];
    }
  }
  return url;
}

ProcessResult run_headless(const std::filesystem::path& chromium, const std::filesystem::path& profile_dir,
                           const std::vector<std::string>& arguments, const std::string& url) {
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start. The other
  // switches keep a fresh profile from reaching out (updates, sync) and from waiting on first-run UI.
  std::vector<std::string> args = {"--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--user-data-dir=" + profile_dir.string()};
  args.insert(args.end(), arguments.begin(), arguments.end());
  args.push_back(url);
  // A browser that hangs (it can, on a broken profile or display set-up) fails the test instead of
  // holding it until ctest's timeout.
  ProcessOptions options;
  options.kill_after = std::chrono::seconds(90);
  return run_program(chromium, args, options);
}

std::vector<std::string> console_lines(const std::string& stderr_text) {
  std::vector<std::string> lines;
  std::stringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(":CONSOLE") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> link_targets(const std::string& html) {
  static const std::regex attribute(R"re(\b(?:href|src)\s*=\s*"([^"]*)")re");
  std::vector<std::string> targets;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attribute); it != std::sregex_iterator(); ++it) {
    targets.push_back(decode_entities((*it)[1].str()));
  }
  return targets;
}

std::vector<std::string> broken_targets(const std::filesystem::path& html_file) {
  std::vector<std::string> broken;
  for (const std::string& target : link_targets(read_file(html_file))) {
    if (target.empty() || target.front() == '#') continue;
    if (has_scheme(target)) {
      broken.push_back(html_file.string() + ": " + target + " (not a file of the report)");
      continue;
    }
    const std::string file = percent_decode(target.substr(0, target.find('#')));
    if (!std::filesystem::is_regular_file(html_file.parent_path() / file)) {
      broken.push_back(html_file.string() + ": " + target + " (no such file)");
    }
  }
  return broken;
}

std::optional<PngSize> png_size(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(24, '\0');
  if (!in.read(head.data(), 24)) return std::nullopt;
  // Signature (8 bytes), then the IHDR chunk: length (4), "IHDR" (4), width (4), height (4), big-endian.
  if (head.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || head.compare(12, 4, "IHDR") != 0) return std::nullopt;
  const auto be32 = [&](std::size_t at) {
    unsigned value = 0;
    for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(head[at + i]);
    return value;
  };
  return PngSize{be32(16), be32(20)};
}

}  // namespace k3lab::testing
