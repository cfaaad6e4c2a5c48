// Unit claims in the runner (docs/reliability.md, "Unit claims and leases"): a unit under another
// process's live lease is skipped and said; a stale one is taken over and noted; a process whose lease
// was taken over writes no terminal record; two runners on one run dir run every unit once; a ledger
// with two terminal records for a unit is said loudly on resume.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "core/indexed_units_experiment.hpp"
#include "core/test_protocol_fixture.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/unit_lease.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::spine_test {
namespace {

using Hook = std::function<void(const experiments::Unit&, experiments::RunEnv&)>;

// Units u=0..n-1 yield {"index": i}; `hook` runs first (it plays the other process).
class HookedExperiment : public k3lab::testing::IndexedUnitsExperiment {
 public:
  explicit HookedExperiment(Hook hook) : hook_(std::move(hook)) {}
  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv& env) override {
    if (hook_) hook_(unit, env);
    return experiments::UnitOutcome::result({{"index", unit.spec["index"]}});
  }

 private:
  Hook hook_;
};

// A fake clock, and liveness by token (Unknown, i.e. another host, unless set).
struct FakeWorld {
  double now = 2'000'000.0;
  std::map<std::string, core::Liveness> alive;
  core::LeaseSettings settings() {
    core::LeaseSettings s;
    s.period_seconds = 100;
    s.renew_seconds = 10;
    s.clock = [this] { return now; };
    s.liveness = [this](const core::LeaseHolder& h) {
      const auto it = alive.find(h.token);
      return it == alive.end() ? core::Liveness::Unknown : it->second;
    };
    return s;
  }
};

core::LeaseHolder other_process(const std::string& token) {
  core::LeaseHolder h;
  h.worker = "other";
  h.pid = 77;
  h.host = "node-elsewhere";
  h.token = token;
  return h;
}

struct ClaimHarness {
  k3lab::testing::TempDir dir;
  std::filesystem::path protocol = dir.write("experiments/memory-pool.json", k3lab::testing::minimal_protocol().dump(2));
  FakeWorld world;

  experiments::RunRequest request(Hook hook, const std::string& worker = "") {
    experiments::RunRequest r;
    r.experiment_id = "memory-pool";
    r.profile = "full";
    r.runs_root = dir.path() / "runs";
    r.protocol_file = protocol;
    r.unfrozen = true;
    r.worker = worker;
    r.lease_settings = world.settings();
    r.experiment_factory = [hook] { return std::make_unique<HookedExperiment>(hook); };
    return r;
  }
};

std::map<std::string, int> terminal_counts(const std::filesystem::path& run) {
  std::map<std::string, int> counts;
  for (const auto& r : core::read_ledger(run).records) {
    if (core::is_terminal_kind(r.value("kind", ""))) ++counts[r["unit"].get<std::string>()];
  }
  return counts;
}

std::vector<nlohmann::json> records_of(const std::filesystem::path& run, const std::string& unit) {
  std::vector<nlohmann::json> out;
  for (const auto& r : core::read_ledger(run).records) {
    if (r.value("unit", "") == unit) out.push_back(r);
  }
  return out;
}

}  // namespace

TEST(UnitClaims, ALiveLeaseIsSkippedAndSaidThenTakenOverOnceExpired) {
  ClaimHarness h;
  const Hook claim_u3_elsewhere = [&](const experiments::Unit& unit, experiments::RunEnv& env) {
    if (unit.id != "u=0") return;
    core::LeaseTable table(env.run_dir, h.world.settings());
    ASSERT_EQ(table.claim("u=3", other_process("X")).outcome, core::ClaimOutcome::Claimed);
  };
  const auto first = experiments::run_experiment(h.request(claim_u3_elsewhere));
  EXPECT_EQ(first.exit_code, experiments::kExitOk) << first.message;
  EXPECT_EQ(first.results, 5u);
  ASSERT_EQ(first.skipped_leased.size(), 1u);
  EXPECT_EQ(first.skipped_leased[0].rfind("u=3 (leased by worker other, pid 77 on node-elsewhere", 0), 0u)
      << first.skipped_leased[0];
  EXPECT_NE(first.message.find("skipped because another process holds their lease"), std::string::npos);
  EXPECT_TRUE(records_of(first.run_dir, "u=3").empty());  // not even an attempt

  // Still within X's lease: a rerun leaves it alone too.
  h.world.now += 99;
  const auto again = experiments::run_experiment(h.request(nullptr));
  EXPECT_EQ(again.skipped_leased.size(), 1u);
  EXPECT_EQ(again.ran_now, 0u);

  h.world.now += 2;  // X never renewed: its lease expired
  const auto second = experiments::run_experiment(h.request(nullptr));
  EXPECT_EQ(second.exit_code, experiments::kExitOk) << second.message;
  EXPECT_TRUE(second.skipped_leased.empty());
  EXPECT_EQ(second.results, 6u);
  const auto u3 = records_of(second.run_dir, "u=3");
  ASSERT_EQ(u3.size(), 3u);
  EXPECT_EQ(u3[0]["note"], "lease-taken-over");
  EXPECT_EQ(u3[0]["from"]["token"], "X");
  EXPECT_NE(u3[0]["why"].get<std::string>().find("expired"), std::string::npos);
  EXPECT_EQ(u3[1]["kind"], "attempt");
  EXPECT_EQ(u3[2]["kind"], "result");
  for (const auto& [unit, n] : terminal_counts(second.run_dir)) EXPECT_EQ(n, 1) << unit;
}

TEST(UnitClaims, AProcessWhoseLeaseWasTakenOverWritesNoTerminalRecord) {
  ClaimHarness h;
  const Hook taken_while_running = [&](const experiments::Unit& unit, experiments::RunEnv& env) {
    if (unit.id != "u=2") return;
    h.world.now += 500;  // this process hung past its lease (SIGSTOP, a frozen node) ...
    core::LeaseTable table(env.run_dir, h.world.settings());
    ASSERT_EQ(table.claim("u=2", other_process("Y")).outcome, core::ClaimOutcome::TakenOver);  // ... and Y took over
  };
  const auto summary = experiments::run_experiment(h.request(taken_while_running));
  EXPECT_EQ(summary.exit_code, experiments::kExitError) << summary.message;
  EXPECT_NE(summary.message.find("lease of unit u=2 was taken over"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("worker other"), std::string::npos) << summary.message;
  EXPECT_EQ(summary.results, 2u);  // u=0 and u=1; nothing after the loss
  const auto u2 = records_of(summary.run_dir, "u=2");
  ASSERT_EQ(u2.size(), 1u);
  EXPECT_EQ(u2[0]["kind"], "attempt");
  core::LeaseTable table(summary.run_dir, h.world.settings());
  EXPECT_EQ(table.view("u=2").lease->holder.token, "Y");  // the loser left Y's lease alone
  experiments::stop_flag().store(false);
}

TEST(UnitClaims, ALeaseOfAProcessDeadOnThisHostIsTakenOverWithoutWaiting) {
  ClaimHarness h;
  const Hook crashed_holder = [&](const experiments::Unit& unit, experiments::RunEnv& env) {
    if (unit.id != "u=0") return;
    auto dead = core::this_process_holder("crashed");
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    dead.pid = child;  // a k3lab that was SIGKILLed a moment ago on this host
    auto settings = h.world.settings();
    settings.liveness = core::process_liveness;  // the real probe
    core::LeaseTable table(env.run_dir, settings);
    ASSERT_EQ(table.claim("u=4", dead).outcome, core::ClaimOutcome::Claimed);
  };
  auto request = h.request(crashed_holder);
  request.lease_settings->liveness = core::process_liveness;
  const auto summary = experiments::run_experiment(request);
  EXPECT_EQ(summary.exit_code, experiments::kExitOk) << summary.message;
  EXPECT_EQ(summary.results, 6u);  // the clock never moved: u=4's lease was unexpired, its process gone
  const auto u4 = records_of(summary.run_dir, "u=4");
  ASSERT_FALSE(u4.empty());
  EXPECT_EQ(u4[0]["note"], "lease-taken-over");
  EXPECT_NE(u4[0]["why"].get<std::string>().find("process is gone"), std::string::npos);
}

TEST(UnitClaims, ATerminalRecordOfAHolderThatDiedBeforeMarkingItDoneIsNotRunAgain) {
  ClaimHarness h;
  const Hook ghost = [&](const experiments::Unit& unit, experiments::RunEnv& env) {
    if (unit.id != "u=0") return;
    core::LeaseTable table(env.run_dir, h.world.settings());
    ASSERT_EQ(table.claim("u=3", other_process("G")).outcome, core::ClaimOutcome::Claimed);
    core::LedgerWriter(env.run_dir, "ghost").append({{"kind", "result"}, {"unit", "u=3"}, {"data", {{"ghost", true}}}});
    h.world.alive["G"] = core::Liveness::Dead;  // G appended its record and died before marking the lease
  };
  const auto summary = experiments::run_experiment(h.request(ghost));
  EXPECT_EQ(summary.exit_code, experiments::kExitOk) << summary.message;
  const auto counts = terminal_counts(summary.run_dir);
  EXPECT_EQ(counts.size(), 6u);
  for (const auto& [unit, n] : counts) EXPECT_EQ(n, 1) << unit;
  for (const auto& r : records_of(summary.run_dir, "u=3")) {
    if (core::is_terminal_kind(r["kind"])) {
      EXPECT_TRUE(r["data"]["ghost"].get<bool>());
    }
    EXPECT_NE(r["kind"], "attempt");
  }
  core::LeaseTable table(summary.run_dir, h.world.settings());
  EXPECT_EQ(table.view("u=3").state, core::LeaseState::Done);
}

TEST(UnitClaims, TwoRunnersOnOneRunDirRunEveryUnitOnce) {
  for (int round = 0; round < 5; ++round) {
    ClaimHarness h;
    const Hook pace = [](const experiments::Unit&, experiments::RunEnv&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // pacing only: lets the two interleave
    };
    auto a = h.request(pace, "a");
    auto b = h.request(pace, "b");
    a.set_overrides = b.set_overrides = {"units=40"};
    experiments::RunSummary sa, sb;
    std::thread ta([&] { sa = experiments::run_experiment(a); });
    std::thread tb([&] { sb = experiments::run_experiment(b); });
    ta.join();
    tb.join();
    ASSERT_EQ(sa.exit_code, experiments::kExitOk) << sa.message;
    ASSERT_EQ(sb.exit_code, experiments::kExitOk) << sb.message;
    ASSERT_EQ(sa.run_dir, sb.run_dir);
    EXPECT_EQ(sa.ran_now + sb.ran_now, 40u) << round;
    const auto counts = terminal_counts(sa.run_dir);
    EXPECT_EQ(counts.size(), 40u);
    for (const auto& [unit, n] : counts) EXPECT_EQ(n, 1) << unit << " round " << round;
  }
}

TEST(UnitClaims, ResumeSaysLoudlyWhenAUnitHasTwoTerminalRecords) {
  ClaimHarness h;
  const auto first = experiments::run_experiment(h.request(nullptr));
  ASSERT_EQ(first.exit_code, experiments::kExitOk) << first.message;
  core::LedgerWriter(first.run_dir, "old-worker").append({{"kind", "failure"}, {"unit", "u=1"}, {"reason", "x"}});
  const auto resumed = experiments::run_experiment(h.request(nullptr));
  EXPECT_EQ(resumed.exit_code, experiments::kExitError) << resumed.message;
  ASSERT_EQ(resumed.duplicate_terminal.size(), 1u);
  EXPECT_EQ(resumed.duplicate_terminal[0].rfind("u=1: 2 terminal records (result seq", 0), 0u)
      << resumed.duplicate_terminal[0];
  EXPECT_NE(resumed.message.find("LEDGER ERROR"), std::string::npos) << resumed.message;
}

}  // namespace k3lab::spine_test
