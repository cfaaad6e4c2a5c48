// Every experiment's smoke profile through the binary, one parameterised case per experiment: the
// exit code, exactly one terminal record per planned unit, the deterministic part of the ledger
// equal to the one the build before the training-layer redesign recorded (fixtures/reports/<id>/run,
// issue 11), and a report page rendered from the new run.
#include <gtest/gtest.h>

#include <set>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/ledger_compare.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "smoke_support.hpp"

namespace k3lab::testing {
namespace {

class ExperimentSmoke : public ::testing::TestWithParam<SmokeExperiment> {};

TEST_P(ExperimentSmoke, EveryPlannedUnitEndsOnceAsRecordedAndThePageRenders) {
  const auto& experiment = GetParam();
  const TempDir dir("k3lab-smoke-" + experiment.id);
  const auto options = hermetic(dir.path());
  const auto arguments = smoke_run_arguments(experiment.id, "runs");
  const auto run = run_k3lab(arguments, options);
  ASSERT_EQ(run.exit_code, experiment.exit_code) << command_line(arguments) << "\n" << run.output();

  const auto records = read_ledger_records(only_run_dir(dir / "runs", experiment.id));
  const auto planned = planned_units(records);
  ASSERT_FALSE(planned.empty()) << "the ledger has no plan record listing the units";
  const auto ends = terminal_counts(records);
  for (const auto& unit : planned) {
    EXPECT_EQ(ends.count(unit) ? ends.at(unit) : 0, 1) << "terminal records of unit " << unit;
  }
  const std::set<std::string> planned_set(planned.begin(), planned.end());
  for (const auto& [unit, count] : ends) EXPECT_TRUE(planned_set.count(unit)) << "unplanned unit " << unit;

  const auto recorded = read_ledger_records(report_fixture(experiment.id).run());
  const auto difference = ledger_difference(recorded, records);
  EXPECT_TRUE(difference.empty()) << "the smoke ledger (apart from t, seq, timing, worker, hardware) differs from fixtures/reports/"
                                  << experiment.id << "/run: " << difference
                                  << "if the change of behaviour is intended, re-record the fixture "
                                     "(fixtures/reports/README.md)";

  const auto report = run_k3lab({"report", "--runs", "runs", "--out", "report"}, options);
  ASSERT_EQ(report.exit_code, 0) << report.output();
  const auto page = dir / "report" / page_dir(experiment.id) / "index.md";
  ASSERT_TRUE(std::filesystem::exists(page)) << report.output();
  const auto text = read_file(page);
  EXPECT_NE(text.find(experiment.id), std::string::npos) << text;
  EXPECT_NE(text.find("complete: " + std::to_string(planned.size()) + " of " + std::to_string(planned.size())),
            std::string::npos)
      << text;
}

INSTANTIATE_TEST_SUITE_P(Experiments, ExperimentSmoke, ::testing::ValuesIn(smoke_experiments()),
                         [](const auto& info) { return test_name(info.param.id); });

}  // namespace
}  // namespace k3lab::testing
