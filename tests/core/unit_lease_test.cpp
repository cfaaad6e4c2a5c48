// Unit leases (core/unit_lease.hpp): claim, renewal, expiry and takeover under a fake clock and a fake
// liveness probe, the refusal of a terminal record after a takeover, real flock races between threads,
// and the real liveness probe against this process and a reaped child.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include "common/temp_dir.hpp"
#include "k3lab/core/unit_lease.hpp"

using namespace k3lab;
using core::ClaimOutcome;
using core::LeaseState;
using core::Liveness;

namespace {

// A clock and a liveness table the test sets by hand.
struct FakeWorld {
  double now = 1'000'000.0;
  std::map<std::string, Liveness> alive;  // by token; Unknown when absent (another host)
  core::LeaseSettings settings(double period = 100, double renew = 10) {
    core::LeaseSettings s;
    s.period_seconds = period;
    s.renew_seconds = renew;
    s.clock = [this] { return now; };
    s.liveness = [this](const core::LeaseHolder& h) {
      const auto it = alive.find(h.token);
      return it == alive.end() ? Liveness::Unknown : it->second;
    };
    return s;
  }
};

core::LeaseHolder holder(const std::string& token, const std::string& host = "node-a") {
  core::LeaseHolder h;
  h.worker = "w-" + token;
  h.pid = 4242;
  h.host = host;
  h.token = token;
  return h;
}

}  // namespace

TEST(UnitLease, AClaimHoldsOthersOffUntilItExpiresUnrenewed) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings(100, 10));
  EXPECT_EQ(table.claim("u=1", holder("A")).outcome, ClaimOutcome::Claimed);
  world.now += 99;
  const auto refused = table.claim("u=1", holder("B"));
  EXPECT_EQ(refused.outcome, ClaimOutcome::HeldByOther);
  ASSERT_TRUE(refused.previous);
  EXPECT_EQ(refused.previous->holder.token, "A");
  world.now += 2;  // 101 s after the claim: expired, and A is not known alive (another host)
  const auto taken = table.claim("u=1", holder("B"));
  EXPECT_EQ(taken.outcome, ClaimOutcome::TakenOver);
  EXPECT_NE(taken.why.find("expired"), std::string::npos) << taken.why;
  EXPECT_EQ(table.view("u=1").lease->holder.token, "B");
}

TEST(UnitLease, RenewalKeepsTheLeaseAcrossManyPeriods) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings(100, 10));
  ASSERT_EQ(table.claim("u", holder("A")).outcome, ClaimOutcome::Claimed);
  for (int i = 0; i < 50; ++i) {  // 50 renewals 60 s apart: 3000 s, thirty periods
    world.now += 60;
    ASSERT_TRUE(table.renew("u", "A")) << i;
    EXPECT_EQ(table.claim("u", holder("B")).outcome, ClaimOutcome::HeldByOther) << i;
  }
  EXPECT_DOUBLE_EQ(table.view("u").lease->expires_at, world.now + 100);
}

TEST(UnitLease, AliveOnThisHostOutlivesExpiryAndDeadIsTakenAtOnce) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings());
  ASSERT_EQ(table.claim("slow", holder("A")).outcome, ClaimOutcome::Claimed);
  ASSERT_EQ(table.claim("crashed", holder("C")).outcome, ClaimOutcome::Claimed);
  world.alive["A"] = Liveness::Alive;
  world.alive["C"] = Liveness::Dead;
  world.now += 10'000;  // far past expiry
  EXPECT_EQ(table.claim("slow", holder("B")).outcome, ClaimOutcome::HeldByOther);
  world.now -= 10'000 - 1;  // 1 s after the claim: unexpired, but its process is gone
  const auto taken = table.claim("crashed", holder("B"));
  EXPECT_EQ(taken.outcome, ClaimOutcome::TakenOver);
  EXPECT_NE(taken.why.find("process is gone"), std::string::npos) << taken.why;
}

TEST(UnitLease, ATakenOverHolderCannotRenewNorWriteItsTerminalRecord) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings(100, 10));
  ASSERT_EQ(table.claim("u", holder("A")).outcome, ClaimOutcome::Claimed);
  world.now += 150;  // A was stopped (SIGSTOP, a hung node) past its lease
  ASSERT_EQ(table.claim("u", holder("B")).outcome, ClaimOutcome::TakenOver);
  EXPECT_FALSE(table.renew("u", "A"));
  int appended = 0;
  EXPECT_FALSE(table.finish("u", "A", [&] { ++appended; }));
  EXPECT_EQ(appended, 0);
  EXPECT_TRUE(table.finish("u", "B", [&] { ++appended; }));
  EXPECT_EQ(appended, 1);
  EXPECT_EQ(table.view("u").state, LeaseState::Done);
  // Done is for good: no claim, however late, and no second finish.
  world.now += 1e6;
  EXPECT_EQ(table.claim("u", holder("D")).outcome, ClaimOutcome::Finished);
  EXPECT_FALSE(table.finish("u", "B", [&] { ++appended; }));
  EXPECT_EQ(appended, 1);
}

TEST(UnitLease, ReleaseFreesAtOnceAndOnlyForItsHolder) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings());
  ASSERT_EQ(table.claim("u", holder("A")).outcome, ClaimOutcome::Claimed);
  table.release("u", "B");  // not B's: nothing happens
  EXPECT_EQ(table.claim("u", holder("B")).outcome, ClaimOutcome::HeldByOther);
  table.release("u", "A");
  EXPECT_EQ(table.view("u").state, LeaseState::Free);
  const auto claimed = table.claim("u", holder("B"));
  EXPECT_EQ(claimed.outcome, ClaimOutcome::Claimed);
  EXPECT_FALSE(claimed.previous);
}

TEST(UnitLease, UnheldTerminalRecordsWaitForLiveLeases) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings(100, 10));
  ASSERT_EQ(table.claim("u", holder("A")).outcome, ClaimOutcome::Claimed);
  int appended = 0;
  EXPECT_FALSE(table.finish_unheld("u", [&] { ++appended; }));  // A still runs it
  world.now += 101;
  EXPECT_TRUE(table.finish_unheld("u", [&] { ++appended; }));
  EXPECT_TRUE(table.finish_unheld("never-claimed", [&] { ++appended; }));
  EXPECT_EQ(appended, 2);
  EXPECT_FALSE(table.finish("u", "A", [&] { ++appended; }));
  EXPECT_EQ(table.claim("u", holder("B")).outcome, ClaimOutcome::Finished);
}

TEST(UnitLease, TheFileNamesItsHolderAndExpiryAndIsReadBack) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings(100, 10));
  auto h = holder("A", "node7");
  h.slurm_job = "41_3";
  ASSERT_EQ(table.claim("mix=a/trace=b", h).outcome, ClaimOutcome::Claimed);
  const auto file = table.file_of("mix=a/trace=b");
  EXPECT_EQ(file.parent_path(), dir.path() / "leases");
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["unit"], "mix=a/trace=b");
  EXPECT_EQ(j["holder"]["host"], "node7");
  EXPECT_EQ(j["holder"]["slurm_job"], "41_3");
  EXPECT_DOUBLE_EQ(j["expires_at"].get<double>(), world.now + 100);
  EXPECT_FALSE(std::filesystem::exists(file.string() + ".tmp"));
  ASSERT_EQ(table.all().size(), 1u);
  EXPECT_EQ(table.all()[0].holder.describe(), "worker w-A, pid 4242 on node7 (slurm 41_3)");
}

TEST(UnitLease, ADamagedLeaseFileIsAnErrorNamingIt) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings());
  const auto file = table.file_of("u");
  dir.write(std::filesystem::relative(file, dir.path()), "[1,2");
  try {
    table.claim("u", holder("A"));
    FAIL() << "a damaged lease was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

// Leases are not fsynced: after a power loss a lease file may be empty. Its holder died with the
// machine, so the unit is free; only a non-empty file that is not a lease is damage (above).
TEST(UnitLease, AnEmptyLeaseFileLeftByAPowerLossIsFree) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  core::LeaseTable table(dir.path(), world.settings());
  const auto file = table.file_of("u");
  dir.write(std::filesystem::relative(file, dir.path()), "");
  EXPECT_EQ(table.view("u").state, LeaseState::Free);
  const auto claimed = table.claim("u", holder("A"));
  EXPECT_EQ(claimed.outcome, ClaimOutcome::Claimed);
  EXPECT_FALSE(claimed.previous);
  EXPECT_EQ(table.view("u").state, LeaseState::Live);
}

TEST(UnitLease, ThreadsRacingForOneUnitGetItOnce) {
  k3lab::testing::TempDir dir("lease");
  for (int round = 0; round < 20; ++round) {
    FakeWorld world;
    const std::string unit = "u=" + std::to_string(round);
    std::atomic<int> claimed{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        core::LeaseTable table(dir.path(), world.settings());
        const auto r = table.claim(unit, holder("T" + std::to_string(t)));
        (r.outcome == ClaimOutcome::Claimed ? claimed : refused)++;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(claimed.load(), 1) << round;
    EXPECT_EQ(refused.load(), 7) << round;
  }
}

TEST(UnitLease, SettingsRefuseARenewalTooCloseToThePeriod) {
  k3lab::testing::TempDir dir("lease");
  FakeWorld world;
  EXPECT_THROW(core::LeaseTable(dir.path(), world.settings(100, 60)), std::invalid_argument);
  EXPECT_THROW(core::LeaseTable(dir.path(), world.settings(100, 0)), std::invalid_argument);
  ::setenv("K3LAB_LEASE_SECONDS", "abc", 1);
  EXPECT_THROW(core::lease_settings_from_environment(), std::invalid_argument);
  ::setenv("K3LAB_LEASE_SECONDS", "30", 1);
  const auto s = core::lease_settings_from_environment();
  EXPECT_DOUBLE_EQ(s.period_seconds, 30);
  EXPECT_DOUBLE_EQ(s.renew_seconds, 3);
  ::unsetenv("K3LAB_LEASE_SECONDS");
}

TEST(ProcessLiveness, ThisProcessIsAliveAReapedChildDeadAnotherHostUnknown) {
  const auto me = core::this_process_holder("w");
  EXPECT_EQ(core::process_liveness(me), Liveness::Alive);
  EXPECT_FALSE(me.pid_start.empty());
  EXPECT_EQ(me.token.size(), 32u);
  EXPECT_NE(core::this_process_holder("w").token, me.token);

  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto gone = me;
  gone.pid = child;
  EXPECT_EQ(core::process_liveness(gone), Liveness::Dead);

  auto reused = me;
  reused.pid_start = "1";  // this pid, but a process started at another time: the pid was reused
  EXPECT_EQ(core::process_liveness(reused), Liveness::Dead);

  auto rebooted = me;
  rebooted.boot_id = "another-boot";
  EXPECT_EQ(core::process_liveness(rebooted), Liveness::Dead);

  auto elsewhere = me;
  elsewhere.host = me.host + "-elsewhere";
  EXPECT_EQ(core::process_liveness(elsewhere), Liveness::Unknown);
}
