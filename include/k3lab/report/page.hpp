#pragma once
// What an experiment's summary produces and the renderer turns into Markdown, CSV, JSON, SVG and
// HTML. Built from ledgers and manifests only (src/report never sees a live run).
#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::report {

struct Cell {
  std::variant<std::monostate, std::string, double, std::int64_t> value;
  int precision = 4;  // significant digits for doubles in md/csv (json keeps full precision)

  Cell() = default;
  Cell(std::string s) : value(std::move(s)) {}
  Cell(const char* s) : value(std::string(s)) {}
  Cell(double d, int digits = 4) : value(d), precision(digits) {}
  Cell(std::int64_t i) : value(i) {}
  Cell(int i) : value(static_cast<std::int64_t>(i)) {}
  Cell(std::size_t i) : value(static_cast<std::int64_t>(i)) {}
};

struct Table {
  std::string id;  // file stem: tables/<id>.csv, tables/<id>.json
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  std::string caption;  // Markdown shown under the table
};

// A table with its id, title and columns set and no rows yet.
Table make_table(std::string id, std::string title, std::vector<std::string> columns);

struct Series {
  std::string label;
  std::vector<double> x;
  std::vector<double> y;
  std::vector<double> y_low;   // optional interval (same length as y) drawn as error bars/band
  std::vector<double> y_high;
};

struct Chart {
  enum class Kind { Line, Scatter, Bar };
  std::string id;  // charts/<id>.svg
  std::string title;
  std::string x_label;
  std::string y_label;
  Kind kind = Kind::Line;
  bool log_x = false;
  bool log_y = false;
  std::vector<std::string> categories;  // Bar: one group per category; series give the bars
  std::vector<Series> series;
  std::string caption;
};

struct Block {
  enum class Kind { Markdown, Table, Chart };
  Kind kind = Kind::Markdown;
  std::string markdown;
  Table table;
  Chart chart;
};

struct LogEntry {
  std::string unit;
  std::string kind;    // failure | invalid | excluded | window
  std::string reason;  // class or reason, as recorded
  std::string detail;
};

struct Page {
  std::string experiment_id;
  std::string title;
  std::string evidence_class;
  std::string profile;
  std::string run_dir;          // relative to the runs root
  std::string run_note;         // what this run is among the others (the headline, or an earlier run)
  std::string report_root = "..";  // the report root, relative to this page's folder (for links back)
  bool frozen = false;
  std::string frozen_detail;    // e.g. "FROZEN: protocol sha256 ab12... frozen at ... rev ..."
  std::vector<std::string> labels;  // shown as warnings at the top, e.g. "simulated endpoint"
  std::vector<std::string> can_say;
  std::vector<std::string> cannot_say;
  std::string status;           // e.g. "complete: 189 of 189 units"
  std::vector<Block> blocks;    // in page order
  std::vector<LogEntry> failures;
  std::vector<LogEntry> excluded;
  std::vector<Block> runs;       // every run of this experiment and profile ("Runs"), empty: not listed
  std::vector<Block> reproduce;  // revision, analysis, commands, hardware, wall time ("Reproduce")
  nlohmann::json provenance;    // from the manifest

  void add_text(std::string markdown);
  void add_table(Table table);
  void add_chart(Chart chart);
};

// What every page rendered from a smoke-profile run opens with, right under its title; the labels'
// warnings (simulated endpoint, systems simulation) follow the protocol line as before.
inline constexpr const char* kSmokeBanner = "SMOKE PROFILE: toy sizes; not evidence about the hypothesis";

// Writes <out_dir>/<experiment_id>[-<profile>]/: index.md, tables/*.csv, tables/*.json, charts/*.svg.
// Deterministic bytes for the same page. Returns the page folder.
std::filesystem::path render_page(const Page& page, const std::filesystem::path& out_dir);

// The folder render_page writes for a page: <out_dir>/<experiment_id>[-<profile>].
std::filesystem::path page_folder(const Page& page, const std::filesystem::path& out_dir);

// Writes the page into `folder` itself (an earlier run's page beside its headline).
void render_page_into(const Page& page, const std::filesystem::path& folder);

struct IndexEntry {
  std::string experiment_id;
  std::string title;
  std::string evidence_class;
  std::string profile;
  std::string status;
  bool frozen = false;
  std::string page_dir;  // relative to the report root
  std::vector<std::string> labels;  // warnings shown beside the entry (e.g. "simulated endpoint")
};

// <out_dir>/index.html and <out_dir>/README.md linking every page.
void render_index(const std::vector<IndexEntry>& entries, const std::filesystem::path& out_dir);

// Standalone renderers (also used by `list -o`, `plan -o`, tests).
std::string table_markdown(const Table& table);
std::string table_csv(const Table& table);
nlohmann::json table_json(const Table& table);
std::string chart_svg(const Chart& chart);

}  // namespace k3lab::report
