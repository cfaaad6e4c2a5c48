#include "k3lab/core/ledger.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {
namespace {

std::string read_all(int fd) {
  std::string data;
  if (::lseek(fd, 0, SEEK_SET) < 0) throw std::runtime_error(std::string("cannot seek ledger: ") + std::strerror(errno));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("cannot read ledger: ") + std::strerror(errno));
    }
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

std::filesystem::path ledger_file(const std::filesystem::path& run_dir, const std::string& worker) {
  if (worker.empty()) return run_dir / "ledger.jsonl";
  for (char c : worker) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      throw std::invalid_argument("worker name \"" + worker + "\" may use only letters, digits, '-' and '_'");
    }
  }
  return run_dir / ("ledger." + worker + ".jsonl");
}

std::string short_text(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Why `record` is not a ledger record ("" when it is one): what every reader relies on.
std::string record_problem(const nlohmann::json& record) {
  if (!record.is_object()) return "expected a JSON object, got " + short_text(record);
  const auto kind = record.find("kind");
  if (kind == record.end()) return "it has no \"kind\"";
  if (!kind->is_string() || kind->get_ref<const std::string&>().empty()) {
    return "\"kind\" must be a non-empty string, got " + short_text(*kind);
  }
  const auto unit = record.find("unit");
  if (unit != record.end() && !unit->is_string()) return "\"unit\" must be a string, got " + short_text(*unit);
  if (unit == record.end() && is_terminal_kind(kind->get<std::string>())) {
    return "a \"" + kind->get<std::string>() + "\" record must name its \"unit\"";
  }
  const auto seq = record.find("seq");
  if (seq != record.end() && !seq->is_number_integer()) return "\"seq\" must be an integer, got " + short_text(*seq);
  const auto t = record.find("t");
  if (t != record.end() && !t->is_string()) return "\"t\" must be a string, got " + short_text(*t);
  const auto units = record.find("units");
  if (*kind == "plan" && units != record.end()) {
    if (!units->is_array()) return "a plan's \"units\" must be an array of unit ids, got " + short_text(*units);
    for (const auto& id : *units) {
      if (!id.is_string()) return "a plan's \"units\" must hold unit id strings, got " + short_text(id);
    }
  }
  return "";
}

// The record on line `number` of `file`; throws naming the file and line when it is not a record.
nlohmann::json checked_record(std::string_view line, const std::filesystem::path& file, std::int64_t number) {
  std::string problem;
  nlohmann::json record;
  try {
    record = parse_json_bounded(line, "it", kLedgerLineJsonLimits);
    problem = record_problem(record);
  } catch (const JsonInputError& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    throw std::runtime_error(file.string() + " line " + std::to_string(number) + " is not a ledger record: " + problem +
                             ". The ledger was edited or damaged by something other than k3lab "
                             "(k3lab never rewrites complete lines): restore the file from a copy, or move the "
                             "run dir aside and start anew with --fresh");
  }
  return record;
}

// Checks complete lines; returns the count.
std::int64_t check_lines(const std::string& data, std::size_t complete_length, const std::filesystem::path& file) {
  std::int64_t count = 0;
  std::size_t start = 0;
  while (start < complete_length) {
    const std::size_t end = data.find('\n', start);
    const std::string_view line(data.data() + start, end - start);
    ++count;
    if (!line.empty()) checked_record(line, file, count);
    start = end + 1;
  }
  return count;
}

// Appends the records of one ledger file to `out`, line by line (the file is never held whole);
// returns whether it ends in an incomplete line, which is skipped.
bool read_ledger_file(const std::filesystem::path& file, LedgerRecords& out) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    if (in.eof()) return !line.empty();  // no newline after it: a writer is mid-line, or died there
    ++number;
    if (line.empty()) continue;
    checked_record(line, file, number);
    out.append_text(line);
  }
  return false;
}

}  // namespace

bool is_terminal_kind(const std::string& kind) {
  return kind == "result" || kind == "invalid" || kind == "failure";
}

bool is_ledger_file_name(const std::string& name) {
  // ledger.jsonl, or ledger.<worker>.jsonl with a non-empty worker name.
  return name == "ledger.jsonl" || (name.rfind("ledger.", 0) == 0 && name.size() > 12 && name.ends_with(".jsonl"));
}

LedgerWriter::LedgerWriter(const std::filesystem::path& run_dir, const std::string& worker)
    : path_(ledger_file(run_dir, worker)) {
  const std::filesystem::path lock_path = path_.string() + ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    throw std::runtime_error("cannot open " + lock_path.string() + ": " + std::strerror(errno) +
                             "; check that the run directory exists and is writable");
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    throw std::runtime_error("another k3lab process is writing " + path_.string() +
                             "; wait for it to finish (one writer per ledger), or give this worker its own shard");
  }
  const bool new_file = !std::filesystem::exists(path_);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    ::close(lock_fd_);
    throw std::runtime_error("cannot open " + path_.string() + ": " + std::strerror(err));
  }
  // The destructor does not run for a constructor that throws: release the lock here.
  try {
    if (new_file) fsync_directory(run_dir);  // the new shard's name survives a crash, like its records
    check_existing_lines(run_dir);
  } catch (...) {
    ::close(fd_);
    ::close(lock_fd_);
    throw;
  }
}

void LedgerWriter::check_existing_lines(const std::filesystem::path& run_dir) {
  const std::string data = read_all(fd_);
  const std::size_t last_newline = data.rfind('\n');
  const std::size_t complete = (last_newline == std::string::npos) ? 0 : last_newline + 1;
  next_seq_ = check_lines(data, complete, path_);
  if (complete < data.size()) {
    // A writer died mid-line. Keep the fragment as an artifact (nothing is deleted), cut it, note it.
    const std::string fragment = data.substr(complete);
    const auto artifacts = run_dir / "artifacts";
    std::filesystem::create_directories(artifacts);
    const auto kept = artifacts / ("torn-" + path_.filename().string() + "-" + std::to_string(next_seq_) + ".bin");
    write_file_atomically(kept, fragment);
    if (::ftruncate(fd_, static_cast<off_t>(complete)) != 0) {
      throw std::runtime_error("cannot cut the torn last line of " + path_.string() + ": " + std::strerror(errno));
    }
    repaired_ = true;
    append({{"kind", "note"},
            {"note", "torn last line cut on open"},
            {"bytes", fragment.size()},
            {"sha256", sha256_hex(fragment)},
            {"artifact", std::filesystem::relative(kept, run_dir).string()}});
  }
}

LedgerWriter::~LedgerWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

nlohmann::json LedgerWriter::append(nlohmann::json record) {
  if (const std::string problem = record_problem(record); !problem.empty()) {
    throw std::invalid_argument("not a ledger record (" + problem + "): " + short_text(record));
  }
  record["seq"] = next_seq_;
  record["t"] = utc_now_iso();
  std::string line = record.dump();
  line.push_back('\n');

  struct stat before {};
  if (::fstat(fd_, &before) != 0) throw std::runtime_error(std::string("cannot stat ledger: ") + std::strerror(errno));
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = (n < 0) ? errno : ENOSPC;
    // Never leave a partial line behind: cut back to the last complete record.
    if (::ftruncate(fd_, before.st_size) != 0) {
      // The torn-line repair on the next open covers this case.
    }
    throw std::runtime_error("cannot append to " + path_.string() + ": " + std::strerror(err) +
                             (err == ENOSPC ? "; the disk is full: free space, then run the same command to resume "
                                              "(everything recorded so far is kept)"
                                            : "; run the same command again to resume"));
  }
  if (is_terminal_kind(record["kind"].get<std::string>()) && ::fdatasync(fd_) != 0) {
    throw std::runtime_error("cannot flush " + path_.string() + ": " + std::strerror(errno));
  }
  ++next_seq_;
  return record;
}

LedgerContents read_ledger(const std::filesystem::path& run_dir) {
  LedgerContents contents;
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(run_dir)) {
    throw std::runtime_error("run directory " + run_dir.string() + " does not exist");
  }
  for (const auto& entry : std::filesystem::directory_iterator(run_dir)) {
    if (is_ledger_file_name(entry.path().filename().string())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::uintmax_t total_bytes = 0;
  for (const auto& file : files) {
    std::error_code error;
    const auto size = std::filesystem::file_size(file, error);
    if (!error) total_bytes += size;
  }
  contents.records.reserve_text(static_cast<std::size_t>(total_bytes));
  for (const auto& file : files) {
    if (read_ledger_file(file, contents.records)) ++contents.torn_lines;
    contents.files.push_back(file.filename().string());
  }
  return contents;
}

std::vector<std::string> finished_units(const LedgerContents& ledger) {
  std::set<std::string> done;
  for (const auto& r : ledger.records) {
    if (is_terminal_kind(r.value("kind", "")) && r.contains("unit")) done.insert(r["unit"].get<std::string>());
  }
  return {done.begin(), done.end()};
}

std::map<std::string, std::vector<nlohmann::json>> duplicate_terminal_records(const LedgerContents& ledger) {
  // Positions first, so that only the duplicated records are ever parsed into the result.
  std::map<std::string, std::vector<std::size_t>> positions;
  for (auto it = ledger.records.begin(); it != ledger.records.end(); ++it) {
    const auto r = *it;
    if (is_terminal_kind(r.value("kind", "")) && r.contains("unit")) {
      positions[r["unit"].get<std::string>()].push_back(it.index());
    }
  }
  std::map<std::string, std::vector<nlohmann::json>> by_unit;
  for (const auto& [unit, indices] : positions) {
    if (indices.size() < 2) continue;
    for (const std::size_t index : indices) by_unit[unit].push_back(ledger.records[index]);
  }
  return by_unit;
}

std::vector<std::string> describe_duplicates(const std::map<std::string, std::vector<nlohmann::json>>& duplicates) {
  std::vector<std::string> lines;
  for (const auto& [unit, records] : duplicates) {
    std::string line = unit + ": " + std::to_string(records.size()) + " terminal records (";
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      line += (i ? "; " : "") + r.value("kind", std::string("?")) + " seq " +
              (r.contains("seq") ? r["seq"].dump() : std::string("?")) + " at " + r.value("t", std::string("?")) +
              " by " + (r.value("worker", std::string()).empty() ? std::string("ledger.jsonl") : "worker " + r.value("worker", std::string()));
    }
    lines.push_back(line + ")");
  }
  return lines;
}

nlohmann::json deterministic_part(const nlohmann::json& record) {
  nlohmann::json copy = record;
  copy.erase("seq");
  copy.erase("t");
  copy.erase("timing");
  copy.erase("worker");
  return copy;
}

}  // namespace k3lab::core
