// Slurm's answers, canned from real sacct/scontrol output: parsing, index expansion, and what each
// end state means for the unit a task was running.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "k3lab/exec/slurm_state.hpp"

using namespace k3lab;
using exec::TaskEnd;
using exec::TaskState;

namespace {

// sacct -X -P -n -j 41,42 --format=JobID,JobName,State,ExitCode,NodeList (with the steps sacct
// prints when -X is left out, which must be skipped).
const char* kSacct =
    "41_0|k3lab-memory-pool|COMPLETED|0:0|vm\n"
    "41_0.batch|batch|COMPLETED|0:0|vm\n"
    "41_1|k3lab-memory-pool|NODE_FAIL|0:0|node7\n"
    "41_2|k3lab-memory-pool|CANCELLED by 0|0:15|vm\n"
    "41_3|k3lab-memory-pool|OUT_OF_MEMORY|0:125|vm\n"
    "41_4|k3lab-memory-pool|TIMEOUT|0:0|vm\n"
    "41_5|k3lab-memory-pool|FAILED|0:9|vm\n"
    "41_6|k3lab-memory-pool|FAILED|1:0|vm\n"
    "41_[7-9%2]|k3lab-memory-pool|PENDING|0:0|None assigned\n"
    "42|other|RUNNING|0:0|vm\n";

// scontrol -o show job 1, trimmed to the fields k3lab reads plus some that it must ignore.
const char* kScontrol =
    "JobId=2 ArrayJobId=1 ArrayTaskId=0 JobName=a.sh UserId=root(0) JobState=COMPLETED Reason=None "
    "ExitCode=0:0 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm Command=/tmp/sl/a.sh\n"
    "JobId=3 ArrayJobId=1 ArrayTaskId=1 JobName=a.sh UserId=root(0) JobState=CANCELLED Reason=None "
    "ExitCode=0:15 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm\n"
    "JobId=1 ArrayJobId=1 ArrayTaskId=2-3 JobName=a.sh UserId=root(0) JobState=PENDING Reason=Resources "
    "ExitCode=0:0 ReqNodeList=(null) ExcNodeList=(null) NodeList=(null) Comment=two words\n";

std::map<std::pair<std::string, std::size_t>, TaskState> by_task(const std::vector<TaskState>& states) {
  std::map<std::pair<std::string, std::size_t>, TaskState> out;
  for (const auto& s : states) {
    if (s.task) out[{s.job_id, *s.task}] = s;
  }
  return out;
}

}  // namespace

TEST(SlurmState, ExpandsArrayIndexLists) {
  EXPECT_EQ(exec::expand_array_indices("5"), (std::vector<std::size_t>{5}));
  EXPECT_EQ(exec::expand_array_indices("2-4"), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(exec::expand_array_indices("[1,4-6%2]"), (std::vector<std::size_t>{1, 4, 5, 6}));
  EXPECT_EQ(exec::expand_array_indices("0-10:5"), (std::vector<std::size_t>{0, 5, 10}));
  for (const std::string bad : {"", "[1-3", "a", "3-1", "1-", "0-4:0"}) {
    EXPECT_THROW(exec::expand_array_indices(bad), std::runtime_error) << bad;
  }
}

TEST(SlurmState, ParsesSacctSkippingStepsAndExpandingPendingRanges) {
  const auto parsed = exec::parse_sacct(kSacct);
  const auto tasks = by_task(parsed);
  ASSERT_EQ(tasks.size(), 10u);  // 41_0..41_9; the plain job 42 has no index
  EXPECT_EQ(parsed.size(), 11u);
  EXPECT_EQ(tasks.at({"41", 1}).state, "NODE_FAIL");
  EXPECT_EQ(tasks.at({"41", 1}).node, "node7");
  EXPECT_EQ(tasks.at({"41", 2}).state, "CANCELLED");
  EXPECT_EQ(tasks.at({"41", 5}).exit_code, "0:9");
  EXPECT_EQ(tasks.at({"41", 8}).state, "PENDING");
  EXPECT_EQ(tasks.at({"41", 8}).node, "");
  EXPECT_EQ(tasks.at({"41", 0}).job_name, "k3lab-memory-pool");
  EXPECT_FALSE(parsed.back().task.has_value());
  EXPECT_EQ(parsed.back().job_id, "42");
}

TEST(SlurmState, RefusesMalformedSacctLines) {
  EXPECT_THROW(exec::parse_sacct("41_0|name|COMPLETED\n"), std::runtime_error);
  EXPECT_THROW(exec::parse_sacct("x_0|name|COMPLETED|0:0|vm\n"), std::runtime_error);
  EXPECT_THROW(exec::parse_sacct("41_[1-|name|PENDING|0:0|vm\n"), std::runtime_error);
  EXPECT_TRUE(exec::parse_sacct("\n  \n").empty());
}

TEST(SlurmState, ParsesScontrolOneLinePerJob) {
  const auto tasks = by_task(exec::parse_scontrol(kScontrol));
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks.at({"1", 0}).state, "COMPLETED");
  EXPECT_EQ(tasks.at({"1", 0}).node, "vm");  // NodeList, not ReqNodeList or ExcNodeList
  EXPECT_EQ(tasks.at({"1", 1}).state, "CANCELLED");
  EXPECT_EQ(tasks.at({"1", 1}).exit_code, "0:15");
  EXPECT_EQ(tasks.at({"1", 3}).state, "PENDING");
  EXPECT_EQ(tasks.at({"1", 3}).node, "");
  EXPECT_THROW(exec::parse_scontrol("JobName=x\n"), std::runtime_error);
}

TEST(SlurmState, ClassifiesEndsByWhatTheyMeanForTheRunningUnit) {
  const auto tasks = by_task(exec::parse_sacct(kSacct));
  EXPECT_EQ(exec::classify(tasks.at({"41", 0})), TaskEnd::Completed);
  EXPECT_EQ(exec::classify(tasks.at({"41", 1})), TaskEnd::Interrupted);  // NODE_FAIL: the process may live on
  EXPECT_EQ(exec::classify(tasks.at({"41", 2})), TaskEnd::Interrupted);  // cancelled
  EXPECT_EQ(exec::classify(tasks.at({"41", 3})), TaskEnd::OutOfMemory);
  EXPECT_EQ(exec::classify(tasks.at({"41", 4})), TaskEnd::Interrupted);  // TIMEOUT: resumes from its checkpoint
  EXPECT_EQ(exec::classify(tasks.at({"41", 5})), TaskEnd::Interrupted);  // kill -9: like a local SIGKILL
  EXPECT_EQ(exec::classify(tasks.at({"41", 6})), TaskEnd::Interrupted);  // k3lab's exit 1: a runtime error
  EXPECT_EQ(exec::classify(tasks.at({"41", 7})), TaskEnd::Active);
  for (const std::string s : {"RUNNING", "REQUEUED", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUE_HOLD"}) {
    EXPECT_EQ(exec::classify(TaskState{"1", 0, "", s, "", ""}), TaskEnd::Active) << s;
  }
  for (const std::string s : {"PREEMPTED", "DEADLINE", "BOOT_FAIL", "REVOKED", "NODE_FAIL", "TIMEOUT", "CANCELLED"}) {
    EXPECT_EQ(exec::classify(TaskState{"1", 0, "", s, "", ""}), TaskEnd::Interrupted) << s;
  }
  EXPECT_EQ(exec::classify(TaskState{"1", 0, "", "SOMETHING_NEW", "", ""}), TaskEnd::Unknown);
}

TEST(SlurmState, DeterministicExitCodesNeedAPersonOthersRunAgain) {
  // By hand, from experiments::ExitCode: 2 usage, 3 protocol, 4 window rule.
  for (const std::string code : {"2:0", "3:0", "4:0"}) {
    EXPECT_EQ(exec::classify(TaskState{"1", 0, "", "FAILED", code, ""}), TaskEnd::NeedsPerson) << code;
  }
  for (const std::string code : {"1:0", "130:0", "0:9", "0:15", "", "garbage", "5:0", "6:0"}) {
    EXPECT_EQ(exec::classify(TaskState{"1", 0, "", "FAILED", code, ""}), TaskEnd::Interrupted) << code;
  }
  // A deterministic code under another state (a cancelled task's code) is not FAILED's verdict.
  EXPECT_EQ(exec::classify(TaskState{"1", 0, "", "CANCELLED", "3:0", ""}), TaskEnd::Interrupted);
  EXPECT_EQ(exec::exit_status("3:0"), 3);
  EXPECT_EQ(exec::exit_status("130:0"), 130);
  EXPECT_FALSE(exec::exit_status(":9").has_value());
}

TEST(SlurmState, TheTablesAreTheWholeMappingWithoutRepeats) {
  std::set<std::string> states;
  for (const auto& rule : exec::slurm_state_table()) {
    EXPECT_TRUE(states.insert(rule.state).second) << rule.state << " twice";
    const TaskEnd expected = rule.end;
    EXPECT_EQ(exec::classify(TaskState{"1", 0, "", rule.state, "0:0", ""}), expected) << rule.state;
    EXPECT_GT(std::string(rule.meaning).size(), 3u) << rule.state;
  }
  // The five ends of issue 20 are in the table and none of them is an outcome by itself.
  for (const std::string s : {"NODE_FAIL", "TIMEOUT", "PREEMPTED", "CANCELLED", "OUT_OF_MEMORY"}) {
    EXPECT_TRUE(states.count(s)) << s;
  }
  std::set<int> codes;
  for (const auto& rule : exec::exit_code_table()) EXPECT_TRUE(codes.insert(rule.code).second) << rule.code;
  EXPECT_EQ(codes, (std::set<int>{0, 1, 2, 3, 4, 130}));
}

namespace {

struct CannedSlurm {
  std::map<std::string, exec::CommandResult> answers;  // by argv[0] + " " + last argument
  std::vector<std::vector<std::string>> calls;
  exec::CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      calls.push_back(argv);
      const auto it = answers.find(argv.front() + " " + argv.back());
      if (it != answers.end()) return it->second;
      const auto by_program = answers.find(argv.front());
      if (by_program != answers.end()) return by_program->second;
      exec::CommandResult missing;
      missing.exit_code = 127;
      missing.not_found = true;
      return missing;
    };
  }
};

}  // namespace

TEST(SlurmState, UsesSacctWhenAccountingAnswers) {
  CannedSlurm slurm;
  slurm.answers["sacct"] = {0, false, kSacct, ""};
  const auto states = exec::query_task_states(slurm.runner(), {"41"});
  EXPECT_EQ(states.source, "sacct");
  EXPECT_EQ(states.tasks.size(), 10u);
  EXPECT_EQ(slurm.calls.size(), 1u);  // no scontrol call for a job sacct reported
  EXPECT_EQ(slurm.calls[0][5], "41");
}

TEST(SlurmState, FallsBackToScontrolWithoutAccountingAndForgetsPurgedJobs) {
  CannedSlurm slurm;
  slurm.answers["sacct"] = {1, false, "", "sacct: error: Slurm accounting storage is disabled\n"};
  slurm.answers["scontrol 1"] = {0, false, kScontrol, ""};
  slurm.answers["scontrol 5"] = {1, false, "", "slurm_load_jobs error: Invalid job id specified\n"};
  const auto states = exec::query_task_states(slurm.runner(), {"1", "5"});
  EXPECT_EQ(states.source, "scontrol");
  EXPECT_EQ(states.tasks.size(), 4u);
  ASSERT_NE(states.find("1", 1), nullptr);
  EXPECT_EQ(states.find("1", 1)->state, "CANCELLED");
  EXPECT_EQ(states.find("5", 0), nullptr);
  ASSERT_EQ(states.notes.size(), 1u);
  EXPECT_NE(states.notes[0].find("accounting storage is disabled"), std::string::npos);
}

TEST(SlurmState, SaysSoWhenNoSchedulerToolIsInstalled) {
  CannedSlurm slurm;
  const auto states = exec::query_task_states(slurm.runner(), {"1"});
  EXPECT_TRUE(states.tasks.empty());
  EXPECT_EQ(states.source, "");
  EXPECT_EQ(states.notes, (std::vector<std::string>{"sacct is not installed", "scontrol is not installed"}));
  EXPECT_TRUE(exec::query_task_states(slurm.runner(), {}).notes.empty());
}

TEST(SlurmState, ReadsMaxArraySizeFromTheClusterConfig) {
  CannedSlurm slurm;
  slurm.answers["scontrol config"] = {0, false, "MailProg                = /bin/mail\nMaxArraySize            = 40001\n", ""};
  EXPECT_EQ(exec::max_array_size(slurm.runner()), 40001u);
  CannedSlurm none;
  EXPECT_EQ(exec::max_array_size(none.runner()), 1001u);
}
