// Unit phases and owed failure records, from hand-written ledgers and canned Slurm states.
#include <gtest/gtest.h>

#include "k3lab/exec/run_status.hpp"

using namespace k3lab;
using exec::UnitPhase;

namespace {

nlohmann::json attempt(const std::string& unit, const std::string& worker, int n = 1) {
  return {{"kind", "attempt"}, {"unit", unit}, {"attempt", n}, {"worker", worker}};
}
nlohmann::json terminal(const std::string& kind, const std::string& unit, const std::string& worker) {
  return {{"kind", kind}, {"unit", unit}, {"worker", worker}, {"reason", kind == "result" ? "" : "why"}};
}

exec::JobRecord job(const std::string& id, exec::TaskLayout layout, std::vector<exec::ArrayTask> tasks,
                    std::size_t shards = 0) {
  exec::JobRecord j;
  j.job_id = id;
  j.job_name = "k3lab-memory-pool";
  j.layout = layout;
  j.shard_count = shards;
  j.tasks = std::move(tasks);
  j.output = "/runs/r/slurm/%A_%a.out";
  return j;
}

exec::TaskStates states(std::vector<exec::TaskState> list) {
  exec::TaskStates s;
  for (auto& t : list) {
    if (t.job_name.empty()) t.job_name = "k3lab-memory-pool";
    s.tasks[{t.job_id, *t.task}] = t;
  }
  s.source = "sacct";
  return s;
}

const exec::UnitStatus& unit(const exec::RunStatus& s, const std::string& id) {
  for (const auto& u : s.units) {
    if (u.unit == id) return u;
  }
  throw std::runtime_error("no unit " + id);
}

}  // namespace

TEST(RunStatus, PerUnitTasksGiveEachUnitItsPhase) {
  const std::vector<std::string> plan = {"A", "B", "C", "D", "E", "F"};
  const std::vector<nlohmann::json> records = {
      {{"kind", "plan"}, {"units", plan}},
      attempt("A", "slurm-10-0"), terminal("result", "A", "slurm-10-0"),
      attempt("B", "slurm-10-1"),
      attempt("D", "slurm-10-3"),
      attempt("E", "slurm-10-4"),
      attempt("F", "slurm-10-5"), terminal("invalid", "F", "slurm-10-5")};
  const std::vector<exec::JobRecord> jobs = {job("10", exec::TaskLayout::PerUnit,
                         {{0, {"A"}}, {1, {"B"}}, {2, {"C"}}, {3, {"D"}}, {4, {"E"}}, {5, {"F"}}})};
  const auto s = states({{"10", 0, "", "COMPLETED", "0:0", "vm"},
                         {"10", 1, "", "RUNNING", "0:0", "vm"},
                         {"10", 2, "", "PENDING", "0:0", ""},
                         {"10", 3, "", "NODE_FAIL", "0:0", "n3"},
                         {"10", 4, "", "CANCELLED", "0:15", "vm"},
                         {"10", 5, "", "COMPLETED", "0:0", "vm"}});
  const auto status = exec::compute_status(plan, records, jobs, s);
  EXPECT_EQ(unit(status, "A").phase, UnitPhase::Result);
  EXPECT_EQ(unit(status, "B").phase, UnitPhase::Running);
  EXPECT_EQ(unit(status, "C").phase, UnitPhase::Queued);
  EXPECT_EQ(unit(status, "D").phase, UnitPhase::Pending);  // NODE_FAIL without a live lease: runs again
  EXPECT_NE(unit(status, "D").note.find("NODE_FAIL"), std::string::npos);
  EXPECT_EQ(unit(status, "E").phase, UnitPhase::Pending);  // cancelled: runs again on resubmission
  EXPECT_EQ(unit(status, "F").phase, UnitPhase::Invalid);
  EXPECT_EQ(unit(status, "B").task, "10_1");
  EXPECT_EQ(status.count(UnitPhase::Pending), 2u);
  EXPECT_EQ(status.tasks.size(), 6u);
  EXPECT_EQ(status.tasks[3].log, "/runs/r/slurm/10_3.out");
  EXPECT_EQ(status.tasks[3].unfinished, 1u);
  EXPECT_EQ(status.tasks[0].unfinished, 0u);

  // No end of these is an outcome: nothing is owed but notes, for D (NODE_FAIL) and E (CANCELLED).
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}).empty());
  const auto notes = exec::slurm_end_notes(records, jobs, s, {true});
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0]["note"], "slurm-task-ended");
  EXPECT_EQ(notes[0]["unit"], "D");
  EXPECT_EQ(notes[0]["slurm"]["state"], "NODE_FAIL");
  EXPECT_EQ(notes[0]["slurm"]["node"], "n3");
  EXPECT_EQ(notes[0]["slurm"]["task"], 3);
  EXPECT_EQ(notes[1]["unit"], "E");

  // Once written, the notes are not owed again, and D stays pending.
  auto written = records;
  written.insert(written.end(), notes.begin(), notes.end());
  EXPECT_TRUE(exec::slurm_end_notes(written, jobs, s, {true}).empty());
  EXPECT_EQ(unit(exec::compute_status(plan, written, jobs, s), "D").phase, UnitPhase::Pending);
}

TEST(RunStatus, ALiveLeaseKeepsAUnitRunningWhateverSlurmSays) {
  const std::vector<nlohmann::json> records = {attempt("a", "slurm-70-0"), attempt("b", "slurm-70-1")};
  const std::vector<exec::JobRecord> jobs = {job("70", exec::TaskLayout::PerUnit, {{0, {"a"}}, {1, {"b"}}})};
  const auto s = states({{"70", 0, "", "NODE_FAIL", "0:0", "n1"}, {"70", 1, "", "OUT_OF_MEMORY", "0:125", "n2"}});
  core::Lease lease;
  lease.unit = "a";
  lease.holder.worker = "slurm-70-0";
  lease.holder.host = "n1";
  lease.holder.pid = 9;
  lease.holder.token = "t";
  lease.expires_at = 4e9;
  exec::LeaseViews leases = {{"a", {core::LeaseState::Live, lease}}, {"b", {core::LeaseState::Live, lease}}};
  const auto status = exec::compute_status({"a", "b"}, records, jobs, s, leases);
  EXPECT_EQ(unit(status, "a").phase, UnitPhase::Running);
  EXPECT_NE(unit(status, "a").note.find("NODE_FAIL in Slurm's view, but its lease is live"), std::string::npos)
      << unit(status, "a").note;
  EXPECT_NE(unit(status, "a").lease.find("worker slurm-70-0, pid 9 on n1"), std::string::npos);
  // Even an outcome end waits for the lease: the process may still record the unit itself.
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}, leases).empty());
  EXPECT_EQ(exec::slurm_failure_records(records, jobs, s, {true}).size(), 1u);
  // Stale leases do not hold a unit.
  leases["a"].state = core::LeaseState::Stale;
  EXPECT_EQ(unit(exec::compute_status({"a", "b"}, records, jobs, s, leases), "a").phase, UnitPhase::Pending);
}

TEST(RunStatus, DuplicateTerminalRecordsAreListedNotPickedFrom) {
  const std::vector<nlohmann::json> records = {terminal("result", "a", "w1"), terminal("failure", "a", "w2"),
                                               terminal("result", "b", "w1")};
  const auto status = exec::compute_status({"a", "b"}, records, {}, exec::TaskStates{});
  ASSERT_EQ(status.duplicates.size(), 1u);
  EXPECT_EQ(status.duplicates[0].rfind("a: 2 terminal records (result seq ? at ? by worker w1; failure", 0), 0u)
      << status.duplicates[0];
  EXPECT_EQ(status.to_json()["duplicates"].size(), 1u);
}

TEST(RunStatus, ADeterministicErrorBlocksItsUnitsUntilALaterJobOwnsThem) {
  const std::vector<exec::JobRecord> first = {job("80", exec::TaskLayout::Shards, {{0, {"a", "b"}}}, 1)};
  const auto s = states({{"80", 0, "", "FAILED", "3:0", "vm"}});  // it never started a unit
  const auto notes = exec::slurm_end_notes({}, first, s, {});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["note"], "slurm-task-needs-person");
  EXPECT_EQ(notes[0]["units"], (nlohmann::json{"a", "b"}));
  EXPECT_FALSE(notes[0].contains("unit"));
  const auto status = exec::compute_status({"a", "b"}, notes, first, s);
  EXPECT_EQ(status.count(UnitPhase::Blocked), 2u);
  ASSERT_EQ(status.needs_person.size(), 1u);
  EXPECT_NE(status.needs_person[0].find("exit 3: the protocol is invalid"), std::string::npos) << status.needs_person[0];

  auto later = first;
  later.push_back(job("81", exec::TaskLayout::Shards, {{0, {"a", "b"}}}, 1));
  EXPECT_TRUE(exec::needs_person_blocks(notes, later).empty());
}

TEST(RunStatus, ShardTaskOwesANoteOnlyForTheUnitItWasRunning) {
  const std::vector<std::string> plan = {"u0", "u1", "u2", "u3", "u4", "u5"};
  // Shard 1 of 2 holds u1, u3, u5: u1 finished, u3 was running when the time limit hit, u5 never started.
  const std::vector<nlohmann::json> records = {attempt("u1", "slurm-20-1"), terminal("result", "u1", "slurm-20-1"),
                                               attempt("u3", "slurm-20-1")};
  const std::vector<exec::JobRecord> jobs = {job("20", exec::TaskLayout::Shards, {{0, {"u0", "u2", "u4"}}, {1, {"u1", "u3", "u5"}}}, 2)};
  const auto s = states({{"20", 0, "", "RUNNING", "0:0", "vm"}, {"20", 1, "", "TIMEOUT", "0:0", "vm"}});
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}).empty());  // TIMEOUT is no outcome
  const auto owed = exec::slurm_end_notes(records, jobs, s, {true});
  ASSERT_EQ(owed.size(), 1u);
  EXPECT_EQ(owed[0]["unit"], "u3");
  EXPECT_EQ(owed[0]["slurm"]["state"], "TIMEOUT");
  EXPECT_NE(owed[0]["detail"].get<std::string>().find("time limit"), std::string::npos);
  const auto status = exec::compute_status(plan, records, jobs, s);
  EXPECT_EQ(unit(status, "u5").phase, UnitPhase::Pending);
  EXPECT_EQ(unit(status, "u0").phase, UnitPhase::Queued);  // its task runs, but another unit (none attempted)
}

TEST(RunStatus, NoFailureForTasksThatEndedBetweenUnitsOrBeforeStarting) {
  const std::vector<nlohmann::json> records = {attempt("a", "slurm-30-0"), terminal("result", "a", "slurm-30-0")};
  const std::vector<exec::JobRecord> jobs = {job("30", exec::TaskLayout::Shards, {{0, {"a", "b"}}, {1, {"c"}}}, 2)};
  // Task 0 hit its time limit after finishing a and before starting b; task 1's node failed at boot.
  const auto s = states({{"30", 0, "", "TIMEOUT", "0:0", "vm"}, {"30", 1, "", "NODE_FAIL", "0:0", "vm"}});
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}).empty());
  EXPECT_TRUE(exec::slurm_end_notes(records, jobs, s, {true}).empty());
}

TEST(RunStatus, FailedTasksLeaveTheirUnitPendingLikeALocalKill) {
  const std::vector<nlohmann::json> records = {attempt("a", "slurm-40-0"), attempt("b", "slurm-40-1")};
  const std::vector<exec::JobRecord> jobs = {job("40", exec::TaskLayout::PerUnit, {{0, {"a"}}, {1, {"b"}}})};
  const auto s = states({{"40", 0, "", "FAILED", "0:9", "vm"}, {"40", 1, "", "FAILED", "1:0", "vm"}});
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}).empty());
  const auto status = exec::compute_status({"a", "b"}, records, jobs, s);
  EXPECT_EQ(unit(status, "a").phase, UnitPhase::Pending);
  EXPECT_EQ(unit(status, "a").note.rfind("task 40_0 ended FAILED (exit 0:9): ", 0), 0u) << unit(status, "a").note;
}

TEST(RunStatus, RequeuedTaskOwesOnlyItsLastUnfinishedAttempt) {
  // Preempted and requeued under the same job and task id: it re-ran x, finished it, died in y.
  const std::vector<nlohmann::json> records = {attempt("x", "slurm-50-0", 1), attempt("x", "slurm-50-0", 2),
                                               terminal("result", "x", "slurm-50-0"), attempt("y", "slurm-50-0")};
  const std::vector<exec::JobRecord> jobs = {job("50", exec::TaskLayout::Shards, {{0, {"x", "y"}}}, 1)};
  const auto s = states({{"50", 0, "", "OUT_OF_MEMORY", "0:125", "vm"}});
  const auto owed = exec::slurm_failure_records(records, jobs, s, {true});  // a training protocol
  ASSERT_EQ(owed.size(), 1u);
  EXPECT_EQ(owed[0]["unit"], "y");
  EXPECT_EQ(owed[0]["reason"], "slurm:OUT_OF_MEMORY");
  // Elsewhere OUT_OF_MEMORY says nothing about the unit: a note, and y runs again.
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {false}).empty());
  EXPECT_EQ(exec::slurm_end_notes(records, jobs, s, {false}).at(0)["unit"], "y");
  EXPECT_EQ(unit(exec::compute_status({"x", "y"}, records, jobs, s), "x").attempts, 2);
}

TEST(RunStatus, AReusedJobIdIsNotMistakenForOurs) {
  const std::vector<nlohmann::json> records = {attempt("a", "slurm-60-0")};
  const std::vector<exec::JobRecord> jobs = {job("60", exec::TaskLayout::PerUnit, {{0, {"a"}}})};
  auto s = states({{"60", 0, "someone-else", "OUT_OF_MEMORY", "0:0", "vm"}});
  EXPECT_TRUE(exec::slurm_failure_records(records, jobs, s, {true}).empty());
  EXPECT_TRUE(exec::slurm_end_notes(records, jobs, s, {true}).empty());
  const auto status = exec::compute_status({"a"}, records, jobs, s);
  EXPECT_EQ(status.tasks[0].state, "UNKNOWN");
  EXPECT_EQ(unit(status, "a").phase, UnitPhase::Pending);
}

TEST(RunStatus, LocalRunsWithoutSlurmStillReport) {
  const std::vector<nlohmann::json> records = {attempt("a", ""), terminal("result", "a", ""), attempt("b", ""),
                                               terminal("failure", "z", "")};
  const auto status = exec::compute_status({"a", "b", "c"}, records, {}, exec::TaskStates{});
  EXPECT_EQ(status.units.size(), 4u);  // z is not in the plan: shown, never hidden
  EXPECT_EQ(unit(status, "b").phase, UnitPhase::Pending);
  EXPECT_EQ(unit(status, "b").attempts, 1);
  EXPECT_EQ(unit(status, "c").note, "not started");
  EXPECT_EQ(unit(status, "z").phase, UnitPhase::Failed);
  const auto j = status.to_json();
  EXPECT_EQ(j["counts"]["pending"], 2);
  EXPECT_EQ(j["counts"]["result"], 1);
}
