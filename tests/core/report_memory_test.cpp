// `report` keeps at most a few bytes of RAM per ledger byte (issue 19: goal <= 4; a DOM of every record
// costs more than 5). A generated ledger of about 15 MB is rendered by build_page in a child process, whose
// peak resident size (wait4's ru_maxrss) less that of an idle child is the memory the report needed.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <variant>

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "run_dir_fixture.hpp"
#include "test_protocol_fixture.hpp"

namespace k3lab {
namespace {

constexpr std::size_t kMemoryTestUnits = 12000;

// A module that reads the run as the real ones do: every terminal record (the scores summed), the
// ledger's attempts counted, one table row per unit kind.
class StreamingSummaryExperiment : public experiments::Experiment {
 public:
  std::string id() const override { return "memory-pool"; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<experiments::Unit> enumerate(const core::Protocol&, const nlohmann::json&) const override { return {}; }
  experiments::UnitOutcome run_unit(const experiments::Unit&, experiments::RunEnv&) override {
    throw std::logic_error("not run in these tests");
  }
  void summarise(const core::Protocol&, const experiments::RunRecords& records, report::Page& page) const override {
    double score = 0;
    std::size_t results = 0, attempts = 0;
    for (const auto& r : records.terminal_records()) {
      results += r.value("kind", "") == "result";
      for (const auto& probe : r["data"]["probes"]) score += probe.value("score", 0.0);
    }
    for (const auto& r : records.ledger.records) attempts += r.value("kind", "") == "attempt";
    report::Table table;
    table.id = "totals";
    table.columns = {"results", "attempts", "score"};
    table.rows.push_back({report::Cell(static_cast<std::int64_t>(results)),
                          report::Cell(static_cast<std::int64_t>(attempts)), report::Cell(score)});
    page.add_table(std::move(table));
  }

 private:
  core::Schema schema_;
};

// A terminal record shaped like an API unit's (coordinates, per-probe measurements, timing), ~1.2 KB.
nlohmann::json generated_result(std::size_t unit) {
  nlohmann::json probes = nlohmann::json::array();
  for (int p = 0; p < 12; ++p) {
    probes.push_back(
        {{"probe", p},
         {"score", static_cast<double>((unit * 7 + static_cast<std::size_t>(p)) % 11) / 10.0},
         {"prompt_tokens", 1048576 - p * 4096},
         {"evidence", {"e-" + std::to_string(unit) + "-" + std::to_string(p), "line " + std::to_string(p)}}});
  }
  const std::string id = "u" + std::to_string(unit);
  return {{"kind", "result"},
          {"unit", id},
          {"spec", {{"family", "multi-hop"}, {"fixture", unit % 8}, {"length", 1048576}, {"stratum", "cold"}}},
          {"data", {{"probes", probes}, {"answer", "the answer of unit " + id}, {"passed", unit % 3 != 0}}},
          {"timing", {{"unit_seconds", 0.25 + static_cast<double>(unit % 13)}, {"ttft_s", 0.5}}}};
}

// Writes the run's ledger directly (the writer's per-record fsync would take minutes); returns its bytes.
std::size_t write_generated_ledger(const std::filesystem::path& run_dir, std::size_t units) {
  std::ofstream out(run_dir / "ledger.jsonl", std::ios::app | std::ios::binary);
  for (std::size_t u = 0; u < units; ++u) {
    out << nlohmann::json({{"kind", "attempt"}, {"unit", "u" + std::to_string(u)}, {"attempt", 1}}).dump() << "\n";
    out << generated_result(u).dump() << "\n";
  }
  out.close();
  return std::filesystem::file_size(run_dir / "ledger.jsonl");
}

// The peak resident size (bytes) of a child that runs `work` and exits with its status.
std::size_t child_peak_resident(const std::function<int()>& work, int* exit_status) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int status = 3;
    try {
      status = work();
    } catch (...) {
      status = 4;
    }
    ::_exit(status);
  }
  EXPECT_GT(pid, 0) << "fork failed";
  int status = 0;
  struct rusage usage {};
  EXPECT_EQ(::wait4(pid, &status, 0, &usage), pid);
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;
}

TEST(ReportMemory, BuildPageNeedsAtMostFourBytesPerLedgerByte) {
  testing::TempDir dir;
  const auto runs = dir.path() / "runs";
  const auto plan_units = [] {
    nlohmann::json ids = nlohmann::json::array();
    for (std::size_t u = 0; u < kMemoryTestUnits; ++u) ids.push_back("u" + std::to_string(u));
    return ids;
  }();
  const auto run = testing::make_run(
      runs, testing::complete_manifest(testing::minimal_protocol("memory-pool"), "full", kMemoryTestUnits),
      {{{"kind", "plan"}, {"units", plan_units}}});
  const std::size_t ledger_bytes = write_generated_ledger(run, kMemoryTestUnits);
  ASSERT_GT(ledger_bytes, std::size_t{12} << 20);
  const experiments::Catalog catalog{{"memory-pool"},
                                     [](const std::string&) { return std::make_unique<StreamingSummaryExperiment>(); }};

  int idle_status = -1, report_status = -1;
  const std::size_t idle = child_peak_resident([] { return 0; }, &idle_status);
  const std::size_t with_report = child_peak_resident(
      [&] {
        const auto page = experiments::build_page(run, runs, catalog);
        // The page read every record: the rows agree with the generator (a second computation).
        const auto& row = page.blocks.at(0).table.rows.at(0);
        const auto units = static_cast<std::int64_t>(kMemoryTestUnits);
        const bool complete = page.status.rfind("complete:", 0) == 0;
        return complete && std::get<std::int64_t>(row.at(0).value) == units &&
                       std::get<std::int64_t>(row.at(1).value) == units
                   ? 0
                   : 1;
      },
      &report_status);
  ASSERT_EQ(idle_status, 0);
  ASSERT_EQ(report_status, 0) << "the page did not count every unit (1) or build_page threw (4)";
  const std::size_t needed = with_report > idle ? with_report - idle : 0;
  EXPECT_LE(needed, 4 * ledger_bytes) << "report needed " << needed << " bytes of RAM for a ledger of " << ledger_bytes
                                      << " bytes (" << static_cast<double>(needed) / static_cast<double>(ledger_bytes)
                                      << " per byte)";
  // The ledger's text itself is held once: a reader that kept nothing would not be measuring the report.
  EXPECT_GE(needed, ledger_bytes / 2) << "the child did not read the ledger";
}

}  // namespace
}  // namespace k3lab
