#include "k3lab/sim/trace_csv.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace k3lab::sim {
namespace {

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// Splits one CSV record (RFC 4180 quoting; no embedded newlines in these formats).
std::vector<std::string> split_csv_line(const std::string& line, bool& ok) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  ok = true;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(trim(field));
      field.clear();
    } else {
      field.push_back(c);
    }
  }
  if (quoted) ok = false;
  fields.push_back(trim(field));
  return fields;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's algorithm: days since 1970-01-01 in the proleptic Gregorian calendar.
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

class RowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::uint64_t parse_count(const std::string& text, const std::string& column) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    // Accept integral floats such as "512.0" (some exports write counts as floats).
    double d = 0;
    auto [p2, e2] = std::from_chars(text.data(), end, d);
    if (!text.empty() && e2 == std::errc() && p2 == end && d >= 0 && std::floor(d) == d && d < 4.0e9) {
      return static_cast<std::uint64_t>(d);
    }
    throw RowError("column \"" + column + "\" is \"" + text + "\", expected a non-negative integer token count");
  }
  if (v > 0xFFFFFFFFull) throw RowError("column \"" + column + "\" is " + text + ", larger than 4294967295 tokens");
  return v;
}

struct Columns {
  std::vector<std::string> required;
  std::vector<std::size_t> index;
};

}  // namespace

CsvTraceFormat parse_csv_trace_format(const std::string& name) {
  if (name == "burstgpt") return CsvTraceFormat::BurstGpt;
  if (name == "azure") return CsvTraceFormat::Azure;
  throw std::invalid_argument("unknown CSV trace format \"" + name + "\": use burstgpt or azure");
}

std::int64_t parse_utc_timestamp_us(const std::string& raw) {
  const std::string text = trim(raw);
  auto bad = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument("timestamp \"" + raw + "\" " + why +
                                 "; expected YYYY-MM-DD HH:MM:SS[.fraction] in UTC");
  };
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') ||
      text[13] != ':' || text[16] != ':') {
    throw bad("is not in the expected layout");
  }
  auto digits = [&](std::size_t pos, std::size_t n) {
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw bad("has a non-digit where a digit belongs");
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  const int hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    throw bad("has a field out of range");
  }
  std::int64_t micros = 0;
  std::size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100000;
    const std::size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (scale > 0) micros += (text[pos] - '0') * scale;  // digits past microseconds are truncated
      scale /= 10;
      ++pos;
    }
    if (pos == start) throw bad("has a '.' without digits");
  }
  const std::string zone = text.substr(pos);
  if (!zone.empty() && zone != "Z" && zone != "+00:00" && zone != "UTC" && zone != " UTC") {
    throw bad("carries a time zone other than UTC (\"" + zone + "\")");
  }
  const std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60'000'000LL + second * 1'000'000LL + micros;
}

Trace import_trace_csv(std::istream& in, const std::string& name, const CsvImportOptions& options,
                       CsvImportReport* report) {
  CsvImportReport local;
  CsvImportReport& rep = report ? *report : local;
  rep = CsvImportReport{};
  const bool burst = options.format == CsvTraceFormat::BurstGpt;
  Columns cols;
  cols.required = burst ? std::vector<std::string>{"Timestamp", "Request tokens", "Response tokens", "Total tokens"}
                        : std::vector<std::string>{"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
  const std::string format_name = burst ? "BurstGPT" : "Azure";

  std::string line;
  std::size_t line_no = 0;
  // Header (skipping blank lines, dropping a UTF-8 byte-order mark).
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (trim(line).empty()) continue;
    bool ok = true;
    header = split_csv_line(line, ok);
    if (!ok) throw std::runtime_error(name + ":" + std::to_string(line_no) + ": unterminated quote in the header");
    break;
  }
  if (header.empty()) throw std::runtime_error(name + ": empty file; expected a " + format_name + " CSV with a header row");
  for (const auto& want : cols.required) {
    auto it = std::find(header.begin(), header.end(), want);
    if (it == header.end()) {
      std::string found, expected;
      for (const auto& h : header) found += (found.empty() ? "" : ", ") + h;
      for (const auto& r : cols.required) expected += (expected.empty() ? "" : ", ") + r;
      throw std::runtime_error(name + ": header has no \"" + want + "\" column (found: " + found + "); a " +
                               format_name + " trace needs the columns " + expected +
                               " -- check the format option (burstgpt or azure)");
    }
    cols.index.push_back(static_cast<std::size_t>(it - header.begin()));
  }

  struct Row {
    std::int64_t t_us;
    std::uint32_t prompt;
    std::uint32_t output;
  };
  std::vector<Row> rows;
  std::int64_t previous_t = 0;
  bool have_previous = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    ++rep.data_rows;
    try {
      bool ok = true;
      const auto fields = split_csv_line(line, ok);
      if (!ok) throw RowError("unterminated quote");
      if (fields.size() != header.size()) {
        throw RowError("has " + std::to_string(fields.size()) + " fields but the header has " +
                       std::to_string(header.size()));
      }
      Row row{};
      if (burst) {
        const std::string& ts = fields[cols.index[0]];
        double seconds = 0;
        auto [ptr, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), seconds);
        if (ts.empty() || ec != std::errc() || ptr != ts.data() + ts.size() || !std::isfinite(seconds) || seconds < 0) {
          throw RowError("column \"Timestamp\" is \"" + ts + "\", expected non-negative seconds from the trace start");
        }
        row.t_us = std::llround(seconds * 1e6);
        const std::uint64_t request = parse_count(fields[cols.index[1]], "Request tokens");
        const std::uint64_t response = parse_count(fields[cols.index[2]], "Response tokens");
        const std::uint64_t total = parse_count(fields[cols.index[3]], "Total tokens");
        if (request + response != total) {
          throw RowError("\"Total tokens\" (" + std::to_string(total) + ") is not \"Request tokens\" + \"Response tokens\" (" +
                         std::to_string(request + response) + ")");
        }
        if (request == 0) throw RowError("\"Request tokens\" is 0; every request needs a prompt");
        row.prompt = static_cast<std::uint32_t>(request);
        row.output = static_cast<std::uint32_t>(response);
      } else {
        try {
          row.t_us = parse_utc_timestamp_us(fields[cols.index[0]]);
        } catch (const std::invalid_argument& e) {
          throw RowError(std::string("column \"TIMESTAMP\": ") + e.what());
        }
        const std::uint64_t context = parse_count(fields[cols.index[1]], "ContextTokens");
        const std::uint64_t generated = parse_count(fields[cols.index[2]], "GeneratedTokens");
        if (context == 0) throw RowError("\"ContextTokens\" is 0; every request needs a prompt");
        row.prompt = static_cast<std::uint32_t>(context);
        row.output = static_cast<std::uint32_t>(generated);
      }
      if (have_previous && row.t_us < previous_t) ++rep.out_of_order;
      previous_t = row.t_us;
      have_previous = true;
      rows.push_back(row);
    } catch (const RowError& e) {
      const std::string message = name + ":" + std::to_string(line_no) + ": " + e.what();
      if (!options.skip_bad_rows) {
        throw std::runtime_error(message + " -- fix or delete the row, or import with skip_bad_rows to count and skip it");
      }
      ++rep.skipped;
      if (rep.problems.size() < 20) rep.problems.push_back(message);
    }
  }
  if (rows.empty()) throw std::runtime_error(name + ": no usable data rows after the header");
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t_us < b.t_us; });
  Trace trace;
  trace.source = std::string(burst ? "burstgpt:" : "azure:") + name;
  trace.records.reserve(rows.size());
  const std::int64_t t0 = rows.front().t_us;
  for (const Row& r : rows) trace.records.push_back({r.t_us - t0, r.prompt, r.output});
  rep.imported = trace.records.size();
  return trace;
}

Trace import_trace_csv_file(const std::filesystem::path& path, const CsvImportOptions& options,
                            CsvImportReport* report) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open CSV trace " + path.string() + ": check the path");
  return import_trace_csv(in, path.filename().string(), options, report);
}

}  // namespace k3lab::sim
