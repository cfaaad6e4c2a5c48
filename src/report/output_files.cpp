// File names, writes and link targets for the report renderers.
#include "output_files.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

namespace k3lab::report::detail {

namespace {

bool is_stem_char(char c, bool first) {
  const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  return alnum || (!first && (c == '.' || c == '_' || c == '-'));
}

}  // namespace

void check_file_stem(std::string_view stem, std::string_view what) {
  bool ok = !stem.empty() && stem.size() <= 120;
  for (std::size_t i = 0; ok && i < stem.size(); ++i) ok = is_stem_char(stem[i], i == 0);
  if (!ok) {
    throw std::invalid_argument(std::string(what) + " '" + std::string(stem) +
                                "' cannot name a file: use 1-120 characters from A-Z a-z 0-9 . _ -, "
                                "starting with a letter or digit");
  }
}

void write_text_file(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error("cannot write " + temporary.string() +
                               ": check that the report folder exists and is writable");
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) throw std::runtime_error("writing " + temporary.string() + " failed (disk full?)");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw std::runtime_error("cannot move " + temporary.string() + " to " + path.string() + ": " + error.message());
  }
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    throw std::runtime_error("cannot read " + path.string() + ": check that it exists and is readable");
  }
  return content;
}

std::string url_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0x0F];
    }
  }
  return out;
}

}  // namespace k3lab::report::detail
