#pragma once
// A run dir's ledger as JSON records, read independently of core's reader (so that tests of the
// ledger and of runs do not trust the code they test): ledger.jsonl and every ledger.<worker>.jsonl.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::testing {

// ledger.jsonl and ledger.<worker>.jsonl in `run_dir`, sorted by name.
std::vector<std::filesystem::path> ledger_files(const std::filesystem::path& run_dir);

// Every complete record of every ledger file (files in name order, lines in file order). An
// incomplete last line (no '\n': a writer was killed mid-line) is skipped; a complete line that is
// not JSON throws.
std::vector<nlohmann::json> read_ledger_records(const std::filesystem::path& run_dir);

// The run dirs of experiment `id` under a runs root (<runs>/<id>/*), sorted by name.
std::vector<std::filesystem::path> run_dirs(const std::filesystem::path& runs_root, const std::string& id);
// The one run dir of `id` under `runs_root`; throws unless there is exactly one.
std::filesystem::path only_run_dir(const std::filesystem::path& runs_root, const std::string& id);

bool is_terminal(const nlohmann::json& record);  // result, invalid or failure
// The unit ids the plan record(s) list, in order.
std::vector<std::string> planned_units(const std::vector<nlohmann::json>& records);
// How many terminal records each unit has.
std::map<std::string, int> terminal_counts(const std::vector<nlohmann::json>& records);
// Each unit's last terminal record, in the plan's order (units the plan does not list follow, in the
// order they first appear), so that interrupted, sharded and straight runs can be compared.
std::vector<nlohmann::json> last_terminal_records(const std::vector<nlohmann::json>& records);

}  // namespace k3lab::testing
