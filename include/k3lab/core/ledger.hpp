#pragma once
// The append-only ledger (DESIGN.md section 4): one JSON object per line, one writer per file
// (file lock), each line in one write(2), a torn last line detected on open, kept as an artifact,
// cut, and noted. Shards (ledger.<worker>.jsonl) follow the same rules; readers take their union.
//
// Record kinds: plan | attempt | result | invalid | failure | note | window.
// Every record has seq (per file), t (UTC), kind; unit records have unit. Wall-clock measurements
// belong under "timing" so that determinism checks can ignore them with "t".
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger_records.hpp"

namespace k3lab::core {

bool is_terminal_kind(const std::string& kind);

class LedgerWriter {
 public:
  // Opens (creating if needed) the ledger file of `run_dir` for `worker` ("" -> ledger.jsonl); a new
  // file's folder entry is fsync'ed. Throws if another process holds the lock, or naming file and line
  // if a complete line is not a valid record.
  LedgerWriter(const std::filesystem::path& run_dir, const std::string& worker = "");
  ~LedgerWriter();
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;

  // Appends one record (seq and t are filled in) and returns it as written. Terminal records are
  // fsync'ed before returning. On a failed write the file is cut back to its previous length.
  nlohmann::json append(nlohmann::json record);

  const std::filesystem::path& path() const { return path_; }
  std::int64_t next_seq() const { return next_seq_; }
  // Set when the open found and cut a torn last line (the note record has been appended).
  bool repaired_torn_line() const { return repaired_; }

 private:
  // Reads the file: counts its lines, refuses one that is not a record, cuts a torn last line.
  void check_existing_lines(const std::filesystem::path& run_dir);

  std::filesystem::path path_;
  int fd_ = -1;
  int lock_fd_ = -1;
  std::int64_t next_seq_ = 0;
  bool repaired_ = false;
};

struct LedgerContents {
  LedgerRecords records;                // every complete record of every shard (file order, shards by name)
  std::vector<std::string> files;       // the shard files read
  std::size_t torn_lines = 0;           // incomplete last lines skipped (a writer may be active)
};

// Reads ledger.jsonl and every ledger.<worker>.jsonl in `run_dir`. Throws naming the file and line
// when a complete line is not a valid record: JSON (within kLedgerLineJsonLimits), an object, a
// non-empty string "kind", a string "unit" when present (required on terminal records), an integer
// "seq" and a string "t" when present, a plan's "units" an array of strings. Reads line by line and keeps
// each record's text (about one byte of RAM per ledger byte; see ledger_records.hpp).
LedgerContents read_ledger(const std::filesystem::path& run_dir);

// True for ledger.jsonl and ledger.<worker>.jsonl (not their .lock files).
bool is_ledger_file_name(const std::string& name);

// The unit ids that have a terminal record.
std::vector<std::string> finished_units(const LedgerContents& ledger);

// Units with more than one terminal record, each with its records in read order. The rule is one
// terminal record per unit; a second one means two processes ran the unit, and which record stands is
// for a person to decide: readers must say so, never pick one silently.
std::map<std::string, std::vector<nlohmann::json>> duplicate_terminal_records(const LedgerContents& ledger);

// One line per duplicated unit: "<unit>: 2 terminal records (result seq 4 in ledger.a.jsonl by worker a, ...)".
std::vector<std::string> describe_duplicates(const std::map<std::string, std::vector<nlohmann::json>>& duplicates);

// A record without "seq", "t", "timing" and "worker" (where it ran): what must be identical between
// two runs of one command, however they were interrupted or sharded.
nlohmann::json deterministic_part(const nlohmann::json& record);

}  // namespace k3lab::core
