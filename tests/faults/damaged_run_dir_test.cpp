// Damaged run dirs through the binary (docs/reliability.md, "Damaged run dirs"): a finished run's
// manifest deleted or cut short is refused by `run` (naming the dir and the fix, appending nothing,
// creating no run dir beside it); lines that are not ledger records are named by file and line by
// `status` and `report`, and `report` still renders every other experiment.
#include <gtest/gtest.h>

#include <fstream>

#include "common/files.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "fault_support.hpp"

namespace k3lab::testing {
namespace {

// Every file of `run_dir` but the lock and lease files a refused command may touch, keyed by name.
std::map<std::string, std::string> recorded_files(const std::filesystem::path& run_dir) {
  auto files = read_tree(run_dir);
  std::erase_if(files,
                [](const auto& entry) { return entry.first.ends_with(".lock") || entry.first.starts_with("leases/"); });
  return files;
}

class DamagedManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto straight = run_k3lab(simulator_experiment().run_arguments(runs), options);
    ASSERT_EQ(straight.exit_code, 0) << straight.output();
    run_dir = only_run_dir(runs, simulator_experiment().id);
  }

  // `run` again: refused naming the run dir and the fix; nothing appended, no other run dir.
  void expect_refused(const std::string& what) {
    const auto before = recorded_files(run_dir);
    const auto refused = run_k3lab(simulator_experiment().run_arguments(runs), options);
    EXPECT_NE(refused.exit_code, 0) << what << "\n" << refused.output();
    EXPECT_EQ(refused.signal, 0) << what;
    EXPECT_NE(refused.output().find(run_dir.string()), std::string::npos) << what << "\n" << refused.output();
    EXPECT_NE(refused.output().find("manifest.json"), std::string::npos) << what << "\n" << refused.output();
    EXPECT_NE(refused.output().find("Restore manifest.json from a copy"), std::string::npos) << refused.output();
    EXPECT_EQ(run_dirs(runs, simulator_experiment().id), std::vector<std::filesystem::path>{run_dir}) << what;
    EXPECT_TRUE(recorded_files(run_dir) == before) << what << ": the refused command changed the run dir";
  }

  TempDir dir{"k3lab-faults-manifest"};
  ProcessOptions options = fault_environment(dir.path());
  std::filesystem::path runs = dir.path() / "runs";
  std::filesystem::path run_dir;
};

TEST_F(DamagedManifest, ADeletedManifestBesideALedgerIsRefusedNotOrphaned) {
  std::filesystem::remove(run_dir / "manifest.json");
  expect_refused("manifest deleted");
}

TEST_F(DamagedManifest, AManifestCutShortIsRefusedNotOrphaned) {
  const auto manifest = read_file(run_dir / "manifest.json");
  std::ofstream(run_dir / "manifest.json", std::ios::binary | std::ios::trunc)
      << manifest.substr(0, manifest.size() / 2);
  expect_refused("manifest cut to half its bytes");
}

// The files of one experiment's page that hold results (index.md also carries when the report was made).
std::map<std::string, std::string> page_results(const std::filesystem::path& page) {
  auto files = read_tree(page);
  files.erase("index.md");
  return files;
}

TEST(DamagedLedger, LinesThatAreNotRecordsAreNamedByFileAndLineAndTheOtherExperimentIsStillReported) {
  TempDir dir("k3lab-faults-ledger");
  const auto options = fault_environment(dir.path());
  const auto runs = dir.path() / "runs";
  for (const auto* experiment : {&simulator_experiment(), &api_experiment()}) {
    const auto straight = run_k3lab(experiment->run_arguments(runs), options);
    ASSERT_EQ(straight.exit_code, 0) << straight.output();
  }
  const auto good_report =
      run_k3lab({"report", "--runs", runs.string(), "--out", (dir / "report-good").string()}, options);
  ASSERT_EQ(good_report.exit_code, 0) << good_report.output();
  const std::string good_page = api_experiment().id + "-smoke";
  const auto good_results = page_results(dir / "report-good" / good_page);
  ASSERT_FALSE(good_results.empty());

  const auto damaged_dir = only_run_dir(runs, simulator_experiment().id);
  const auto ledger = damaged_dir / "ledger.jsonl";
  const std::string intact = read_file(ledger);
  // After the plan and four more records: line 6 of the file.
  std::size_t cut = 0;
  for (int line = 0; line < 5; ++line) cut = intact.find('\n', cut) + 1;
  // A terminal record of the run whose unit is a number.
  auto numeric_unit = last_terminal_records(read_ledger_records(damaged_dir)).back();
  numeric_unit["unit"] = 7;

  for (const std::string& bad_line : {std::string("42"), std::string("[]"), numeric_unit.dump()}) {
    SCOPED_TRACE("line 6 is " + bad_line.substr(0, 60));
    std::ofstream(ledger, std::ios::binary | std::ios::trunc) << intact.substr(0, cut) << bad_line << "\n"
                                                              << intact.substr(cut);
    const std::string where = ledger.string() + " line 6";

    const auto status = run_k3lab({"status", damaged_dir.string()}, options);
    EXPECT_NE(status.exit_code, 0) << status.output();
    EXPECT_NE(status.output().find(where), std::string::npos) << status.output();

    const auto report_dir = dir / "report-damaged";
    std::filesystem::remove_all(report_dir);
    const auto report = run_k3lab({"report", "--runs", runs.string(), "--out", report_dir.string()}, options);
    EXPECT_NE(report.exit_code, 0) << report.output();
    EXPECT_EQ(report.signal, 0);
    EXPECT_NE(report.output().find(where), std::string::npos) << report.output();
    EXPECT_TRUE(page_results(report_dir / good_page) == good_results) << "the good experiment's page changed";
    ASSERT_TRUE(std::filesystem::exists(report_dir / "index.html")) << report.output();
    const auto index = read_file(report_dir / "index.html");
    EXPECT_NE(index.find("DAMAGED"), std::string::npos) << index;
    EXPECT_NE(index.find(where), std::string::npos) << "the index must list the damaged run with its error";
  }
}

}  // namespace
}  // namespace k3lab::testing
