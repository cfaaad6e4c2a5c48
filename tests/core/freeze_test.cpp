#include <gtest/gtest.h>

#include <fstream>

#include "k3lab/analysis_info.hpp"
#include "k3lab/core/freeze.hpp"
#include "k3lab/core/protocol.hpp"
#include "run_dir_fixture.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab::core;
using k3lab::testing::complete_manifest;
using k3lab::testing::kPlan;
using k3lab::testing::kResult;
using k3lab::testing::make_run;
using k3lab::testing::minimal_protocol;
using k3lab::testing::TempDir;

namespace {


nlohmann::json edited_protocol() {
  auto doc = minimal_protocol();
  doc["hypothesis"] = "an edited hypothesis";
  return doc;
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

struct FrozenProtocol {
  TempDir dir;
  std::filesystem::path file = dir.write("experiments/memory-pool.json", minimal_protocol().dump(2));
  std::filesystem::path runs = dir / "runs";
  FrozenProtocol() { freeze(load_protocol(file, nullptr)); }
  Protocol edit() {
    dir.write("experiments/memory-pool.json", edited_protocol().dump(2));
    return load_protocol(file, nullptr);
  }
};

}  // namespace

TEST(Refreeze, ResultsOfTheFrozenDesignBlockAnEditedProtocol) {
  FrozenProtocol p;
  const auto frozen_design = complete_manifest(minimal_protocol(), "full", 2, /*frozen=*/true);
  ASSERT_EQ(frozen_design["protocol_sha256"], load_protocol(p.file, nullptr).hash());
  EXPECT_TRUE(runs_blocking_refreeze(load_protocol(p.file, nullptr), p.runs).empty()) << "unchanged: nothing to do";
  make_run(p.runs, frozen_design, {kPlan});
  const Protocol edited = p.edit();
  EXPECT_TRUE(runs_blocking_refreeze(edited, p.runs).empty()) << "a plan alone is no result";
  // Results of some other design (neither frozen nor the edit) do not block either.
  auto other = minimal_protocol();
  other["title"] = "another design";
  make_run(p.runs, complete_manifest(other, "full", 2), {kPlan, kResult});
  EXPECT_TRUE(runs_blocking_refreeze(edited, p.runs).empty());
  const auto with_result = make_run(p.runs, frozen_design, {kPlan, kResult});
  EXPECT_EQ(runs_blocking_refreeze(edited, p.runs), std::vector<std::filesystem::path>{with_result});
}

TEST(Refreeze, WithoutAFreezeRecordFrozenResultsStillBlock) {
  FrozenProtocol p;
  const auto with_result =
      make_run(p.runs, complete_manifest(minimal_protocol(), "full", 2, /*frozen=*/true), {kPlan, kResult});
  const Protocol edited = p.edit();
  std::filesystem::remove(freeze_record_path(edited));
  EXPECT_EQ(runs_blocking_refreeze(edited, p.runs), std::vector<std::filesystem::path>{with_result});
}

TEST(Refreeze, ADamagedRunDirIsNotTakenForAbsentResults) {
  FrozenProtocol p;
  const auto run = make_run(p.runs, complete_manifest(minimal_protocol(), "full", 2, true), {kPlan, kResult});
  std::filesystem::remove(run / "manifest.json");
  EXPECT_THROW(runs_blocking_refreeze(p.edit(), p.runs), DamagedRunDir);
}

TEST(Refreeze, ForcedFreezeIsRecordedAndOrdinaryRecordsKeepTheirFields) {
  FrozenProtocol p;
  const auto ordinary = read_json(freeze_record_path(load_protocol(p.file, nullptr)));
  std::vector<std::string> keys;
  for (auto it = ordinary.begin(); it != ordinary.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"analysis", "frozen_at", "id", "k3lab_version", "protocol_sha256",
                                            "source_dirty", "source_revision"}));

  const Protocol edited = p.edit();
  const auto record = freeze(edited, FreezeOptions{true, "results existed in runs/memory-pool/x"});
  EXPECT_TRUE(record.forced);
  const auto on_disk = read_json(freeze_record_path(edited));
  EXPECT_EQ(on_disk["forced"], true);
  EXPECT_EQ(on_disk["forced_note"], "results existed in runs/memory-pool/x");
  EXPECT_EQ(on_disk["protocol_sha256"], sha256_hex(edited_protocol().dump()));
  const auto read_back = read_freeze_record(edited);
  ASSERT_TRUE(read_back.has_value());
  EXPECT_TRUE(read_back->forced);
  EXPECT_EQ(read_back->forced_note, "results existed in runs/memory-pool/x");
  EXPECT_TRUE(check_freeze(edited).frozen);
}

// The analysis is frozen with the protocol: a new freeze records this build's; `freeze --analysis`
// adds it to an older record without touching the protocol's own fields, and refuses an edited protocol.
TEST(FreezeAnalysis, ARecordKeepsTheAnalysisAndAnOlderRecordGainsItUntouchedOtherwise) {
  FrozenProtocol p;
  const auto record_file = freeze_record_path(load_protocol(p.file, nullptr));
  auto record = read_json(record_file);
  EXPECT_EQ(record.at("analysis").at("version"), k3lab::build::kAnalysisVersion);
  EXPECT_EQ(record.at("analysis").at("sources_sha256"), k3lab::build::kAnalysisSha256);

  record.erase("analysis");
  record["frozen_at"] = "2020-01-01T00:00:00.000Z";  // an older record, frozen before analyses were
  std::ofstream(record_file) << record.dump(2);
  ASSERT_FALSE(FreezeRecord::from_json(read_json(record_file)).analysis_version.size());
  freeze_analysis(load_protocol(p.file, nullptr));
  const auto updated = read_json(record_file);
  EXPECT_EQ(updated.at("frozen_at"), "2020-01-01T00:00:00.000Z");
  EXPECT_EQ(updated.at("protocol_sha256"), record.at("protocol_sha256"));
  EXPECT_EQ(updated.at("analysis").at("sources_sha256"), k3lab::build::kAnalysisSha256);

  const Protocol edited = p.edit();
  EXPECT_THROW(freeze_analysis(edited), std::runtime_error);
  EXPECT_EQ(read_json(record_file), updated) << "a refused analysis freeze writes nothing";
}
