#include "common/ledger_records.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/files.hpp"

namespace k3lab::testing {
namespace {

// ledger.jsonl, or ledger.<worker>.jsonl with a non-empty worker.
bool is_ledger_file_name(const std::string& name) {
  const std::string head = "ledger.", tail = ".jsonl";
  if (name == "ledger" + tail) return true;
  return name.size() > head.size() + tail.size() && name.starts_with(head) && name.ends_with(tail);
}

}  // namespace

std::vector<std::filesystem::path> ledger_files(const std::filesystem::path& run_dir) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw std::runtime_error("no run dir " + run_dir.string());
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir)) {
    if (entry.is_regular_file() && is_ledger_file_name(entry.path().filename().string())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<nlohmann::json> read_ledger_records(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> records;
  for (const auto& file : ledger_files(run_dir)) {
    const std::string text = read_file(file);
    std::size_t start = 0, line_number = 1;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1, ++line_number) {
      try {
        records.push_back(nlohmann::json::parse(text.substr(start, end - start)));
      } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(file.string() + " line " + std::to_string(line_number) + " is not JSON: " + e.what());
      }
    }
  }
  return records;
}

std::vector<std::filesystem::path> run_dirs(const std::filesystem::path& runs_root, const std::string& id) {
  std::vector<std::filesystem::path> dirs;
  const auto folder = runs_root / id;
  if (!std::filesystem::is_directory(folder)) return dirs;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::filesystem::path only_run_dir(const std::filesystem::path& runs_root, const std::string& id) {
  const auto dirs = run_dirs(runs_root, id);
  if (dirs.size() != 1) {
    throw std::runtime_error("expected one run dir under " + (runs_root / id).string() + ", found " +
                             std::to_string(dirs.size()));
  }
  return dirs.front();
}

bool is_terminal(const nlohmann::json& record) {
  const std::string kind = record.value("kind", "");
  return kind == "result" || kind == "invalid" || kind == "failure";
}

std::vector<std::string> planned_units(const std::vector<nlohmann::json>& records) {
  std::vector<std::string> units;
  for (const auto& r : records) {
    if (r.value("kind", "") != "plan" || !r.contains("units")) continue;
    for (const auto& u : r.at("units")) units.push_back(u.get<std::string>());
  }
  return units;
}

std::map<std::string, int> terminal_counts(const std::vector<nlohmann::json>& records) {
  std::map<std::string, int> counts;
  for (const auto& r : records) {
    if (is_terminal(r)) ++counts[r.value("unit", "")];
  }
  return counts;
}

std::vector<nlohmann::json> last_terminal_records(const std::vector<nlohmann::json>& records) {
  std::map<std::string, nlohmann::json> last;
  std::vector<std::string> order = planned_units(records);
  for (const auto& r : records) {
    if (!is_terminal(r)) continue;
    const std::string unit = r.value("unit", "");
    if (!last.count(unit) && std::find(order.begin(), order.end(), unit) == order.end()) order.push_back(unit);
    last[unit] = r;
  }
  std::vector<nlohmann::json> out;
  for (const auto& unit : order) {
    const auto it = last.find(unit);
    if (it != last.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace k3lab::testing
