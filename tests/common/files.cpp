#include "common/files.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace k3lab::testing {
namespace {

// Lines with their '\n' kept, so that a missing final newline is a difference too.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, stop - start));
    start = stop;
  }
  return lines;
}

struct Edit {
  char kind;  // ' ' kept, '-' only in expected, '+' only in actual
  const std::string* line;
};

// The edit script from a[lo_a, hi_a) to b[lo_b, hi_b): a longest common subsequence when the table
// is small, otherwise every expected line removed and every actual line added.
void middle_edits(const std::vector<std::string>& a, std::size_t lo_a, std::size_t hi_a,
                  const std::vector<std::string>& b, std::size_t lo_b, std::size_t hi_b, std::vector<Edit>* edits) {
  const std::size_t n = hi_a - lo_a, m = hi_b - lo_b;
  if (n * m > 4'000'000) {
    for (std::size_t i = lo_a; i < hi_a; ++i) edits->push_back({'-', &a[i]});
    for (std::size_t j = lo_b; j < hi_b; ++j) edits->push_back({'+', &b[j]});
    return;
  }
  // common[i][j]: LCS length of a[lo_a + i ..) and b[lo_b + j ..)
  std::vector<std::uint32_t> common((n + 1) * (m + 1), 0);
  const auto at = [m](std::size_t i, std::size_t j) { return i * (m + 1) + j; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      common[at(i, j)] = a[lo_a + i] == b[lo_b + j] ? common[at(i + 1, j + 1)] + 1
                                                     : std::max(common[at(i + 1, j)], common[at(i, j + 1)]);
    }
  }
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[lo_a + i] == b[lo_b + j]) {
      edits->push_back({' ', &a[lo_a + i++]});
      ++j;
    } else if (i < n && (j == m || common[at(i + 1, j)] >= common[at(i, j + 1)])) {
      edits->push_back({'-', &a[lo_a + i++]});
    } else {
      edits->push_back({'+', &b[lo_b + j++]});
    }
  }
}

std::vector<Edit> edit_script(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<Edit> edits;
  for (std::size_t i = 0; i < prefix; ++i) edits.push_back({' ', &a[i]});
  middle_edits(a, prefix, a.size() - suffix, b, prefix, b.size() - suffix, &edits);
  for (std::size_t i = a.size() - suffix; i < a.size(); ++i) edits.push_back({' ', &a[i]});
  return edits;
}

void print_line(std::ostringstream& out, char kind, const std::string& line) {
  out << kind << line;
  if (line.empty() || line.back() != '\n') out << "\n\\ No newline at end of file\n";
}

}  // namespace

std::filesystem::path source_dir() { return K3LAB_SOURCE_DIR; }

std::filesystem::path smoke_fixture_run(const std::string& id) { return source_dir() / "fixtures/reports" / id / "run"; }

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::map<std::string, std::string> read_tree(const std::filesystem::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    files[std::filesystem::relative(entry.path(), root).generic_string()] = read_file(entry.path());
  }
  return files;
}

std::filesystem::path copy_protocols(const std::filesystem::path& dir) {
  const auto target = dir / "experiments";
  std::filesystem::create_directories(target);
  std::filesystem::copy(source_dir() / "experiments", target,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  return target;
}

std::string unified_diff(const std::string& expected, const std::string& actual, const std::string& expected_name,
                         const std::string& actual_name, std::size_t max_lines) {
  if (expected == actual) return "";
  constexpr std::size_t kContext = 3;
  const auto a = split_lines(expected);
  const auto b = split_lines(actual);
  const auto edits = edit_script(a, b);
  std::vector<std::size_t> changes;
  for (std::size_t k = 0; k < edits.size(); ++k) {
    if (edits[k].kind != ' ') changes.push_back(k);
  }
  // Lines of a and b before each edit, for the hunk headers.
  std::vector<std::size_t> a_before(edits.size() + 1, 0), b_before(edits.size() + 1, 0);
  for (std::size_t k = 0; k < edits.size(); ++k) {
    a_before[k + 1] = a_before[k] + (edits[k].kind != '+');
    b_before[k + 1] = b_before[k] + (edits[k].kind != '-');
  }
  std::ostringstream out;
  out << "--- " << expected_name << "\n+++ " << actual_name << "\n";
  for (std::size_t c = 0; c < changes.size();) {
    std::size_t last = c;
    while (last + 1 < changes.size() && changes[last + 1] - changes[last] <= 2 * kContext + 1) ++last;
    const std::size_t begin = changes[c] >= kContext ? changes[c] - kContext : 0;
    const std::size_t end = std::min(changes[last] + kContext + 1, edits.size());
    out << "@@ -" << a_before[begin] + 1 << "," << a_before[end] - a_before[begin] << " +" << b_before[begin] + 1
        << "," << b_before[end] - b_before[begin] << " @@\n";
    for (std::size_t k = begin; k < end; ++k) print_line(out, edits[k].kind, *edits[k].line);
    c = last + 1;
  }
  std::string text = out.str();
  std::size_t lines = 0, cut = 0;
  while (cut < text.size() && lines < max_lines) {
    cut = text.find('\n', cut);
    cut = cut == std::string::npos ? text.size() : cut + 1;
    ++lines;
  }
  if (cut < text.size()) text = text.substr(0, cut) + "... (diff cut after " + std::to_string(max_lines) + " lines)\n";
  return text;
}

std::map<std::string, std::string> report_measurements(const std::filesystem::path& report_root) {
  std::map<std::string, std::string> out;
  for (const auto& [name, bytes] : read_tree(report_root)) {
    if (name.find("/tables/wall-time-by-run.") != std::string::npos) continue;
    if (name.find("/tables/") != std::string::npos || name.find("/charts/") != std::string::npos) out[name] = bytes;
  }
  return out;
}

std::string mask_analysis_statement(const std::string& page) {
  static const std::regex statement("(\\*\\*Analysis:\\*\\*|<strong>Analysis:</strong>)[^\n]*");
  return std::regex_replace(page, statement, "$1 <masked>");
}

std::string tree_difference(const std::filesystem::path& expected, const std::filesystem::path& actual,
                            const std::function<std::string(const std::string&)>& normalise) {
  auto want = read_tree(expected);
  auto got = read_tree(actual);
  if (normalise) {
    for (auto& [name, bytes] : want) bytes = normalise(bytes);
    for (auto& [name, bytes] : got) bytes = normalise(bytes);
  }
  std::string missing, extra, diff;
  for (const auto& [name, bytes] : want) {
    const auto it = got.find(name);
    if (it == got.end()) {
      missing += " " + name;
    } else if (diff.empty() && it->second != bytes) {
      diff = unified_diff(bytes, it->second, (expected / name).string(), (actual / name).string());
    }
  }
  for (const auto& [name, bytes] : got) {
    if (!want.count(name)) extra += " " + name;
  }
  std::string out;
  if (!missing.empty()) out += "missing under " + actual.string() + ":" + missing + "\n";
  if (!extra.empty()) out += "not expected under " + actual.string() + ":" + extra + "\n";
  return out + diff;
}

}  // namespace k3lab::testing
