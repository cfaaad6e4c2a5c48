#include <gtest/gtest.h>

#include <fstream>

#include "k3lab/core/freeze.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"
#include "common/kind_count_window_rule.hpp"
#include "indexed_units_experiment.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab;
using k3lab::testing::minimal_protocol;
using k3lab::testing::TempDir;

namespace {

// A module whose units compute a seeded number; it can mark units invalid, fail one, or stop after k.
class CountingExperiment : public k3lab::testing::IndexedUnitsExperiment {
 public:
  explicit CountingExperiment(int stop_after = -1) : stop_after_(stop_after) {}
  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv& env) override {
    const int i = unit.spec["index"].get<int>();
    ++calls;
    if (stop_after_ >= 0 && calls > stop_after_) {
      experiments::stop_flag().store(true);
      throw std::runtime_error("stopped");
    }
    if (i == env.parameters["fail_unit"].get<int>()) throw std::runtime_error("boom");
    const int every = env.parameters["invalid_every"].get<int>();
    if (every > 0 && i % every == every - 1) return experiments::UnitOutcome::invalid("cache-miss", "d");
    core::Rng rng(core::stream_seed(env.parameters["seed"].get<std::uint64_t>(), {static_cast<std::uint64_t>(i)}));
    return experiments::UnitOutcome::result({{"value", rng.next_u64()}}, {{"wall", calls}});
  }
  std::unique_ptr<experiments::WindowRule> window_rule(const core::Protocol&, const nlohmann::json&) const override {
    return std::make_unique<k3lab::testing::KindCountWindowRule>("invalid", 2, "two invalid units", "invalid");
  }
  int calls = 0;

 private:
  int stop_after_;
};

struct Harness {
  TempDir dir;
  std::filesystem::path protocol;
  Harness(nlohmann::json doc = minimal_protocol()) {
    protocol = dir.write("experiments/memory-pool.json", doc.dump(2));
  }
  experiments::RunRequest request(int stop_after = -1) {
    experiments::RunRequest r;
    r.experiment_id = "memory-pool";
    r.profile = "full";
    r.runs_root = dir.path() / "runs";
    r.protocol_file = protocol;
    r.experiment_factory = [stop_after] { return std::make_unique<CountingExperiment>(stop_after); };
    return r;
  }
  void freeze() {
    CountingExperiment e;
    core::freeze(core::load_protocol(protocol, &e.parameter_schema()));
  }
  std::vector<nlohmann::json> terminal(const std::filesystem::path& run) {
    experiments::RunRecords records{core::read_manifest(run), core::read_ledger(run), run};
    std::vector<nlohmann::json> out;
    for (const auto& r : records.terminal_records()) out.push_back(core::deterministic_part(r));
    return out;
  }
};

}  // namespace

TEST(Runner, RefusesUnfrozenUnlessAsked) {
  Harness h;
  auto s = experiments::run_experiment(h.request());
  EXPECT_EQ(s.exit_code, experiments::kExitProtocol);
  EXPECT_NE(s.message.find("k3lab freeze"), std::string::npos);
  auto r = h.request();
  r.unfrozen = true;
  s = experiments::run_experiment(r);
  EXPECT_EQ(s.exit_code, 0) << s.message;
  for (const auto& rec : core::read_ledger(s.run_dir).records) {
    if (core::is_terminal_kind(rec["kind"])) {
      EXPECT_TRUE(rec.value("unfrozen", false));
    }
  }
  EXPECT_FALSE(core::read_manifest(s.run_dir)["frozen"].get<bool>());
}

TEST(Runner, RunsEveryUnitOnceThenSaysComplete) {
  Harness h;
  h.freeze();
  auto s = experiments::run_experiment(h.request());
  ASSERT_EQ(s.exit_code, 0) << s.message;
  EXPECT_EQ(s.results, 6u);
  const auto ledger = core::read_ledger(s.run_dir);
  EXPECT_EQ(ledger.records.front()["kind"], "plan");
  EXPECT_EQ(ledger.records.front()["units"].size(), 6u);
  EXPECT_TRUE(core::read_manifest(s.run_dir)["frozen"].get<bool>());
  auto again = experiments::run_experiment(h.request());
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_TRUE(again.already_complete);
  EXPECT_EQ(again.run_dir, s.run_dir);
  EXPECT_EQ(again.ran_now, 0u);
  auto fresh = h.request();
  fresh.fresh = true;
  EXPECT_NE(experiments::run_experiment(fresh).run_dir, s.run_dir);
}

TEST(Runner, InterruptedAndCrashedRunsResumeToTheSameResults) {
  Harness straight;
  straight.freeze();
  const auto reference = straight.terminal(experiments::run_experiment(straight.request()).run_dir);

  Harness h;
  h.freeze();
  auto s = experiments::run_experiment(h.request(/*stop_after=*/2));
  experiments::stop_flag().store(false);
  EXPECT_EQ(s.exit_code, experiments::kExitInterrupted);
  EXPECT_EQ(s.results, 2u);
  // Simulate a SIGKILL mid-write: a torn line after an attempt record.
  std::ofstream(s.run_dir / "ledger.jsonl", std::ios::app) << R"({"kind":"result","unit":"u=2","da)";
  auto resumed = experiments::run_experiment(h.request());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.message;
  EXPECT_EQ(resumed.run_dir, s.run_dir);
  EXPECT_EQ(resumed.ran_now, 4u);
  EXPECT_EQ(h.terminal(s.run_dir), reference);
}

TEST(Runner, RefusesAnEditedProtocolAndChangesOnceResultsExist) {
  Harness h;
  h.freeze();
  auto s = experiments::run_experiment(h.request(/*stop_after=*/1));
  experiments::stop_flag().store(false);
  auto doc = minimal_protocol();
  doc["parameters"]["seed"] = 2;
  h.dir.write("experiments/memory-pool.json", doc.dump(2));
  auto edited = experiments::run_experiment(h.request());
  EXPECT_EQ(edited.exit_code, experiments::kExitProtocol);
  EXPECT_NE(edited.message.find("edited after it was frozen"), std::string::npos) << edited.message;
  auto dev = h.request();
  dev.unfrozen = true;
  auto refused = experiments::run_experiment(dev);
  EXPECT_EQ(refused.exit_code, experiments::kExitProtocol);
  EXPECT_NE(refused.message.find("already holds results"), std::string::npos) << refused.message;
}

TEST(Runner, FailuresAreRecordedAndWindowRuleStops) {
  auto doc = minimal_protocol();
  doc["parameters"]["fail_unit"] = 0;
  doc["parameters"]["invalid_every"] = 2;
  Harness h(doc);
  h.freeze();
  auto s = experiments::run_experiment(h.request());
  EXPECT_EQ(s.exit_code, experiments::kExitWindowStopped);
  EXPECT_EQ(s.failures, 1u);
  EXPECT_EQ(s.invalid, 2u);
  const auto ledger = core::read_ledger(s.run_dir);
  EXPECT_EQ(ledger.records.back()["kind"], "window");
  bool saw_failure = false;
  for (const auto& r : ledger.records) {
    if (r["kind"] == "failure") {
      saw_failure = true;
      EXPECT_EQ(r["reason"], "exception");
      EXPECT_EQ(r["detail"], "boom");
    }
  }
  EXPECT_TRUE(saw_failure);
  // A stopped window is final: running again does not continue it, and says so with the window-rule
  // exit code (not 0, which a script would read as done).
  auto again = experiments::run_experiment(h.request());
  EXPECT_TRUE(again.already_complete);
  EXPECT_EQ(again.exit_code, experiments::kExitWindowStopped) << again.message;
  EXPECT_NE(again.message.find("--fresh"), std::string::npos) << again.message;
}

TEST(Runner, SetOverridesNeedUnfrozenAndKnownKeys) {
  nlohmann::json params = {{"a", {{"b", 1}}}, {"c", "x"}};
  experiments::apply_overrides(params, {"a.b=5", "c=hello"});
  EXPECT_EQ(params["a"]["b"], 5);
  EXPECT_EQ(params["c"], "hello");
  try {
    experiments::apply_overrides(params, {"a.bb=1"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean \"b\""), std::string::npos);
  }
  Harness h;
  h.freeze();
  auto r = h.request();
  r.set_overrides = {"units=2"};
  EXPECT_EQ(experiments::run_experiment(r).exit_code, experiments::kExitProtocol);
  r.unfrozen = true;
  auto s = experiments::run_experiment(r);
  EXPECT_EQ(s.exit_code, 0) << s.message;
  EXPECT_EQ(s.planned, 2u);
}

TEST(Runner, ShardsWriteTheirOwnLedgers) {
  Harness h;
  h.freeze();
  auto first = h.request();
  first.shard = std::make_pair(std::size_t{0}, std::size_t{2});
  first.worker = "task-0";
  auto s0 = experiments::run_experiment(first);
  ASSERT_EQ(s0.exit_code, 0) << s0.message;
  auto second = h.request();
  second.run_dir = s0.run_dir;
  second.shard = std::make_pair(std::size_t{1}, std::size_t{2});
  second.worker = "task-1";
  auto s1 = experiments::run_experiment(second);
  ASSERT_EQ(s1.exit_code, 0) << s1.message;
  EXPECT_TRUE(std::filesystem::exists(s0.run_dir / "ledger.task-0.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(s0.run_dir / "ledger.task-1.jsonl"));
  Harness straight;
  straight.freeze();
  EXPECT_EQ(h.terminal(s0.run_dir), straight.terminal(experiments::run_experiment(straight.request()).run_dir));
}

TEST(Runner, RefusesARunDirWhoseManifestIsGoneInsteadOfOrphaningIt) {
  Harness h;
  h.freeze();
  const auto first = experiments::run_experiment(h.request(/*stop_after=*/2));
  experiments::stop_flag().store(false);
  ASSERT_EQ(first.results, 2u);
  std::filesystem::remove(first.run_dir / "manifest.json");
  std::string message;
  int exit_code = 0;
  try {
    const auto again = experiments::run_experiment(h.request());
    message = again.message;
    exit_code = again.exit_code;
  } catch (const std::exception& e) {
    message = e.what();
    exit_code = -1;
  }
  EXPECT_NE(exit_code, 0);
  EXPECT_NE(message.find(first.run_dir.string() + " is a damaged run dir"), std::string::npos) << message;
  std::size_t run_dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(h.dir.path() / "runs/memory-pool")) {
    run_dirs += entry.is_directory();
  }
  EXPECT_EQ(run_dirs, 1u) << "no new run dir may be started beside the damaged one";
}
