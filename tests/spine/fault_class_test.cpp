// Transient versus terminal (experiments/fault_class.hpp, docs/reliability.md): the classification
// table, and the runner's behaviour on each side of it: an environmental fault leaves the unit open and
// stops the command with exit 1; an outcome is a terminal failure record; a rerun finishes the unit.
#include <cerrno>
#include <filesystem>
#include <system_error>

#include <gtest/gtest.h>

#include "core/indexed_units_experiment.hpp"
#include "core/test_protocol_fixture.hpp"
#include "k3lab/core/environment_fault.hpp"
#include "k3lab/core/freeze.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/fault_class.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::spine_test {
namespace {

using experiments::classify_exception;

TEST(FaultClass, EnvironmentalFaultsByTypeCodeAndMessage) {
  EXPECT_EQ(classify_exception(core::EnvironmentFault("lock lost")).reason, "environment");
  EXPECT_TRUE(classify_exception(core::EnvironmentFault("x")).environmental);
  const std::filesystem::filesystem_error full("write", std::make_error_code(std::errc::no_space_on_device));
  EXPECT_EQ(classify_exception(full).reason, "disk-full");
  const std::system_error io(EIO, std::system_category(), "read");
  EXPECT_EQ(classify_exception(io).reason, "io-error");
  const std::system_error quota(EDQUOT, std::generic_category(), "write");
  EXPECT_EQ(classify_exception(quota).reason, "disk-quota");
  const std::system_error too_big(EFBIG, std::generic_category(), "write");  // past RLIMIT_FSIZE
  EXPECT_EQ(classify_exception(too_big).reason, "file-size-limit");
  EXPECT_TRUE(classify_exception(too_big).environmental);
  // LibTorch's errors carry the system message or the stream error as text only.
  EXPECT_EQ(classify_exception(std::runtime_error("[enforce fail at inline_container.cc:471] . PytorchStreamWriter "
                                                  "failed writing file data/0: file write failed"))
                .reason,
            "checkpoint-write");
  EXPECT_EQ(classify_exception(std::runtime_error("PytorchStreamReader failed reading zip archive: failed finding "
                                                  "central directory"))
                .reason,
            "checkpoint-unreadable");
  EXPECT_EQ(classify_exception(std::runtime_error("basic_filebuf::xsputn error: No space left on device")).reason,
            "disk-full");
}

TEST(FaultClass, EverythingElseIsAnOutcomeOfTheArm) {
  for (const std::exception* e : std::initializer_list<const std::exception*>{
           new std::runtime_error("loss is NaN at step 3"), new std::invalid_argument("shape mismatch"),
           new std::system_error(EINVAL, std::generic_category(), "bad argument")}) {
    const auto fault = classify_exception(*e);
    EXPECT_FALSE(fault.environmental) << e->what();
    EXPECT_EQ(fault.reason, "exception") << e->what();
    delete e;
  }
}

// Unit 1 throws `fault` while `armed`; every other unit (and unit 1 once disarmed) yields a result.
class FaultyExperiment : public k3lab::testing::IndexedUnitsExperiment {
 public:
  FaultyExperiment(std::function<void()> fault, bool* armed) : fault_(std::move(fault)), armed_(armed) {}
  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv&) override {
    if (unit.spec["index"] == 1 && *armed_) fault_();
    return experiments::UnitOutcome::result({{"index", unit.spec["index"]}});
  }

 private:
  std::function<void()> fault_;
  bool* armed_;
};

struct Harness {
  k3lab::testing::TempDir dir;
  std::filesystem::path protocol = dir.write("experiments/memory-pool.json", k3lab::testing::minimal_protocol().dump(2));
  bool armed = true;

  experiments::RunRequest request(std::function<void()> fault) {
    experiments::RunRequest r;
    r.experiment_id = "memory-pool";
    r.profile = "full";
    r.runs_root = dir.path() / "runs";
    r.protocol_file = protocol;
    r.unfrozen = true;
    r.experiment_factory = [this, fault] { return std::make_unique<FaultyExperiment>(fault, &armed); };
    return r;
  }
  std::vector<nlohmann::json> records_of(const std::filesystem::path& run, const std::string& unit) {
    std::vector<nlohmann::json> out;
    for (const auto& r : core::read_ledger(run).records) {
      if (r.value("unit", "") == unit) out.push_back(r);
    }
    return out;
  }
};

TEST(FaultClass, ADiskFullInsideAUnitLeavesItOpenAndTheRerunFinishesIt) {
  Harness h;
  const auto fault = [] {
    throw std::filesystem::filesystem_error("save checkpoint", std::make_error_code(std::errc::no_space_on_device));
  };
  const auto first = experiments::run_experiment(h.request(fault));
  EXPECT_EQ(first.exit_code, experiments::kExitError) << first.message;
  EXPECT_NE(first.message.find("disk-full"), std::string::npos) << first.message;
  EXPECT_NE(first.message.find("run the same command again"), std::string::npos) << first.message;
  EXPECT_EQ(first.results, 1u);  // u=0 finished before the fault; nothing after it ran
  for (const auto& r : h.records_of(first.run_dir, "u=1")) EXPECT_EQ(r["kind"], "attempt") << r.dump();

  h.armed = false;  // the disk was freed
  const auto second = experiments::run_experiment(h.request(fault));
  EXPECT_EQ(second.exit_code, experiments::kExitOk) << second.message;
  EXPECT_EQ(second.run_dir, first.run_dir);
  EXPECT_EQ(second.results, 6u);
  EXPECT_EQ(second.failures, 0u);
  int terminal = 0;
  for (const auto& r : h.records_of(second.run_dir, "u=1")) terminal += core::is_terminal_kind(r["kind"]) ? 1 : 0;
  EXPECT_EQ(terminal, 1);
}

TEST(FaultClass, AnOrdinaryExceptionIsAFailureRecordOfTheArm) {
  Harness h;
  const auto summary = experiments::run_experiment(h.request([] { throw std::runtime_error("diverged"); }));
  EXPECT_EQ(summary.exit_code, experiments::kExitOk) << summary.message;
  EXPECT_EQ(summary.failures, 1u);
  const auto records = h.records_of(summary.run_dir, "u=1");
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["kind"], "failure");
  EXPECT_EQ(records.back()["reason"], "exception");
  EXPECT_EQ(records.back()["detail"], "diverged");
}

}  // namespace
}  // namespace k3lab::spine_test
