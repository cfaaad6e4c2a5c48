// submit_to_slurm end to end in one process: a counting experiment, a fake Slurm that records
// sbatch calls and answers sacct from a table, and array tasks executed from the generated script
// (bash runs it with a stand-in binary; its arguments then drive the real runner in process).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "common/kind_count_window_rule.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/unit_lease.hpp"
#include "k3lab/exec/resources.hpp"
#include "k3lab/exec/slurm_executor.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "script_runner.hpp"

using namespace k3lab;

namespace {

const char* kProtocol = R"({
  "id": "memory-pool", "title": "t", "seed_section": "s", "evidence_class": "systems-simulation",
  "hypothesis": "h", "arms": [{"id": "a", "description": "d", "requested_by_seed": true},
                              {"id": "b", "description": "d", "requested_by_seed": true}],
  "controlled_variables": ["x"], "metrics": [{"name": "m", "description": "d"}],
  "evaluation_cadence": "e", "stopping_rule": "s", "invalid_run_rule": "two failures stop the run",
  "decision_rule": "d", "can_say": ["c"], "cannot_say": ["n"],
  "parameters": {"units": 6, "seed": 7}, "profiles": {"full": {}, "smoke": {"units": 3}}})";

// Units compute a seeded number; `stop_after` calls, it behaves like a task receiving SIGTERM.
class CountingExperiment : public experiments::Experiment {
 public:
  explicit CountingExperiment(int stop_after = -1) : stop_after_(stop_after) {
    schema_.integer("units", "units").at_least(1);
    schema_.integer("seed", "seed");
  }
  std::string id() const override { return "memory-pool"; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<experiments::Unit> enumerate(const core::Protocol&, const nlohmann::json& p) const override {
    std::vector<experiments::Unit> units;
    for (int i = 0; i < p["units"].get<int>(); ++i) units.push_back({"u=" + std::to_string(i), {{"index", i}}});
    return units;
  }
  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv& env) override {
    if (stop_after_ >= 0 && calls_++ >= stop_after_) {
      experiments::stop_flag().store(true);
      throw std::runtime_error("terminated");
    }
    core::Rng rng(core::stream_seed(env.parameters["seed"].get<std::uint64_t>(),
                                    {unit.spec["index"].get<std::uint64_t>()}));
    return experiments::UnitOutcome::result({{"value", rng.next_u64()}});
  }
  std::unique_ptr<experiments::WindowRule> window_rule(const core::Protocol&, const nlohmann::json&) const override {
    return std::make_unique<k3lab::testing::KindCountWindowRule>("failure", 2, "two failed units", "failures");
  }
  void summarise(const core::Protocol&, const experiments::RunRecords&, report::Page&) const override {}

 private:
  int stop_after_;
  int calls_ = 0;
  core::Schema schema_;
};

// sbatch hands out job ids from 100; sacct answers from `states` (job_task -> "STATE|exit|node").
struct FakeSlurm {
  std::map<std::string, std::string> states;
  std::vector<std::string> scripts;  // every script sbatch received
  std::vector<std::vector<std::string>> calls;
  int next_job = 100;
  bool sbatch_fails = false;

  exec::CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      calls.push_back(argv);
      exec::CommandResult r;
      if (argv[0] == "sbatch") {
        if (sbatch_fails) return exec::CommandResult{1, false, "", "sbatch: error: invalid partition specified: gpu\n"};
        std::ifstream in(argv.back());
        std::ostringstream text;
        text << in.rdbuf();
        scripts.push_back(text.str());
        return exec::CommandResult{0, false, std::to_string(next_job++) + "\n", ""};
      }
      if (argv[0] == "sacct") {
        r.exit_code = 0;
        for (const auto& [task, state] : states) r.out += task + "|k3lab-memory-pool|" + state + "\n";
        return r;
      }
      if (argv[0] == "scontrol" && argv.back() != "config") {
        return exec::CommandResult{1, false, "", "slurm_load_jobs error: Invalid job id specified\n"};
      }
      r.exit_code = 127;
      r.not_found = true;
      return r;
    };
  }
  std::size_t sbatch_calls() const {
    std::size_t n = 0;
    for (const auto& c : calls) n += c[0] == "sbatch";
    return n;
  }
};

struct Harness {
  k3lab::testing::TempDir dir;
  std::filesystem::path protocol = dir.write("experiments/memory-pool.json", kProtocol);
  std::filesystem::path binary = k3lab::testing::write_argument_printer(dir.path());
  FakeSlurm slurm;

  experiments::RunRequest request(const std::string& runs = "runs", int stop_after = -1) const {
    experiments::RunRequest r;
    r.experiment_id = "memory-pool";
    r.profile = "full";
    r.runs_root = dir.path() / runs;
    r.unfrozen = true;
    r.protocol_file = protocol;
    r.experiment_factory = [stop_after] { return std::make_unique<CountingExperiment>(stop_after); };
    return r;
  }
  exec::SlurmSubmitOptions options(std::optional<std::size_t> shards = std::nullopt) {
    exec::SlurmSubmitOptions o;
    o.shard_count = shards;
    o.k3lab_binary = binary;
    o.runner = slurm.runner();
    return o;
  }

  // One array task: bash executes the submitted script, the stand-in prints the k3lab arguments,
  // and those arguments drive the runner here.
  experiments::RunSummary run_task(const exec::SubmitResult& submitted, std::size_t task, int stop_after = -1) {
    const auto run = k3lab::testing::run_array_task(submitted.script_path, submitted.job_id, task);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    auto r = request("runs", stop_after);
    const auto& a = run.arguments;
    EXPECT_GE(a.size(), 2u);
    EXPECT_EQ(a[0], "run");
    EXPECT_EQ(a[1], "memory-pool");
    for (std::size_t i = 2; i < a.size(); ++i) {
      const auto next = [&] { return i + 1 < a.size() ? a[++i] : std::string(); };
      if (a[i] == "--profile") r.profile = next();
      else if (a[i] == "--run-dir") r.run_dir = next();
      else if (a[i] == "--worker") r.worker = next();
      else if (a[i] == "--unit") r.only_units.push_back(next());
      else if (a[i] == "--unfrozen") r.unfrozen = true;
      else if (a[i] == "--shard") {
        const auto text = next();
        r.shard = std::make_pair(std::stoul(text.substr(0, text.find('/'))), std::stoul(text.substr(text.find('/') + 1)));
      } else ADD_FAILURE() << "unexpected task argument " << a[i];
    }
    auto summary = experiments::run_experiment(r);
    experiments::stop_flag().store(false);
    return summary;
  }

  static std::vector<nlohmann::json> terminal(const std::filesystem::path& run_dir) {
    experiments::RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
    std::vector<nlohmann::json> out;
    for (const auto& r : records.terminal_records()) out.push_back(core::deterministic_part(r));
    return out;
  }
};

std::vector<std::size_t> task_indices(const exec::JobRecord& job) {
  std::vector<std::size_t> out;
  for (const auto& t : job.tasks) out.push_back(t.index);
  return out;
}

}  // namespace

TEST(SlurmSubmit, ShardedArrayWithAKilledTaskEqualsOneProcessAfterResubmission) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options(4));
  ASSERT_EQ(first.exit_code, 0) << first.message;
  EXPECT_EQ(first.job_id, "100");
  EXPECT_EQ(first.tasks, 4u);
  EXPECT_EQ(first.submitted_units, 6u);
  EXPECT_TRUE(std::filesystem::exists(first.script_path));
  EXPECT_EQ(h.slurm.scripts.at(0), first.script);
  auto jobs = exec::read_job_records(first.run_dir);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].tasks[0].units, (std::vector<std::string>{"u=0", "u=4"}));
  EXPECT_EQ(jobs[0].tasks[3].units, (std::vector<std::string>{"u=3"}));

  // Tasks 0, 2, 3 complete; task 1 is cancelled after its first unit (SIGTERM between units).
  for (std::size_t t : {0u, 2u, 3u}) EXPECT_EQ(h.run_task(first, t).exit_code, 0);
  EXPECT_EQ(h.run_task(first, 1, /*stop_after=*/1).exit_code, experiments::kExitInterrupted);
  h.slurm.states = {{"100_0", "COMPLETED|0:0|vm"}, {"100_1", "CANCELLED by 0|0:15|vm"},
                    {"100_2", "COMPLETED|0:0|vm"}, {"100_3", "COMPLETED|0:0|vm"}};
  auto status = exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}});
  EXPECT_EQ(status.status.count(exec::UnitPhase::Result), 5u);
  EXPECT_EQ(status.status.count(exec::UnitPhase::Pending), 1u);
  EXPECT_EQ(status.failures_recorded, 0u);  // a cancelled task owes no failure: its unit runs again

  const auto second = exec::submit_to_slurm(h.request(), h.options(4));
  ASSERT_EQ(second.exit_code, 0) << second.message;
  EXPECT_EQ(second.job_id, "101");
  EXPECT_EQ(second.run_dir, first.run_dir);
  EXPECT_EQ(second.finished, 5u);
  jobs = exec::read_job_records(first.run_dir);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(task_indices(jobs[1]), (std::vector<std::size_t>{1}));
  EXPECT_EQ(jobs[1].tasks[0].units, (std::vector<std::string>{"u=5"}));
  h.slurm.states["101_1"] = "RUNNING|0:0|vm";
  EXPECT_EQ(h.run_task(second, 1).exit_code, 0);
  h.slurm.states["101_1"] = "COMPLETED|0:0|vm";

  const auto reference = experiments::run_experiment(h.request("runs-one-process"));
  ASSERT_EQ(reference.exit_code, 0) << reference.message;
  EXPECT_EQ(Harness::terminal(first.run_dir), Harness::terminal(reference.run_dir));

  const auto third = exec::submit_to_slurm(h.request(), h.options(4));
  EXPECT_EQ(third.exit_code, 0);
  EXPECT_TRUE(third.job_id.empty());
  EXPECT_EQ(h.slurm.sbatch_calls(), 2u);
}

TEST(SlurmSubmit, NodeFailureLeavesTheUnitPendingWithANoteAndItRunsAgain) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options());
  ASSERT_EQ(first.exit_code, 0) << first.message;
  EXPECT_EQ(first.tasks, 6u);
  for (std::size_t t : {0u, 1u, 2u, 3u}) EXPECT_EQ(h.run_task(first, t).exit_code, 0);
  {  // task 4 started u=4 on a node that then died (its process died with it: no live lease); 5 never started
    core::LedgerWriter shard(first.run_dir, "slurm-100-4");
    shard.append({{"kind", "attempt"}, {"unit", "u=4"}, {"attempt", 1}, {"worker", "slurm-100-4"}});
  }
  {  // ... and died in the middle of writing its next line
    std::ofstream(first.run_dir / "ledger.slurm-100-4.jsonl", std::ios::app) << "{\"kind\":\"res";
  }
  h.slurm.states = {{"100_0", "COMPLETED|0:0|vm"}, {"100_1", "COMPLETED|0:0|vm"}, {"100_2", "COMPLETED|0:0|vm"},
                    {"100_3", "COMPLETED|0:0|vm"}, {"100_4", "NODE_FAIL|0:0|node9"}, {"100_5", "CANCELLED|0:0|"}};
  EXPECT_EQ(core::read_ledger(first.run_dir).torn_lines, 1u);
  const auto second = exec::submit_to_slurm(h.request(), h.options());
  ASSERT_EQ(second.exit_code, 0) << second.message;
  EXPECT_EQ(second.failures_recorded, 0u);  // NODE_FAIL is no outcome of the unit
  const auto jobs = exec::read_job_records(first.run_dir);
  EXPECT_EQ(task_indices(jobs.back()), (std::vector<std::size_t>{4, 5}));

  const auto ledger = core::read_ledger(first.run_dir);
  std::vector<nlohmann::json> notes;
  for (const auto& r : ledger.records) {
    EXPECT_NE(r.value("kind", ""), "failure") << r.dump();
    if (r.value("note", "") == "slurm-task-ended") notes.push_back(r);
  }
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["unit"], "u=4");
  EXPECT_EQ(notes[0]["slurm"]["state"], "NODE_FAIL");
  EXPECT_EQ(notes[0]["slurm"]["node"], "node9");
  EXPECT_TRUE(std::filesystem::exists(first.run_dir / "ledger.slurm-accounting.jsonl"));
  EXPECT_EQ(ledger.torn_lines, 0u);  // the dead task's torn line was cut, kept as an artifact, and noted
  bool noted = false;
  for (const auto& r : ledger.records) noted |= r.value("note", "") == "torn last line cut on open";
  EXPECT_TRUE(noted);

  // Noting is idempotent, and the resubmitted tasks finish the run with one terminal record per unit.
  h.slurm.states["101_4"] = "COMPLETED|0:0|vm";
  h.slurm.states["101_5"] = "COMPLETED|0:0|vm";
  EXPECT_EQ(h.run_task(second, 4).exit_code, 0);
  EXPECT_EQ(h.run_task(second, 5).exit_code, 0);
  const auto status = exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}});
  EXPECT_EQ(status.failures_recorded, 0u);
  EXPECT_EQ(status.status.count(exec::UnitPhase::Result), 6u);
  EXPECT_EQ(status.status.count(exec::UnitPhase::Pending), 0u);
  EXPECT_TRUE(status.status.duplicates.empty());
  std::size_t note_count = 0;
  for (const auto& r : core::read_ledger(first.run_dir).records) note_count += r.value("note", "") == "slurm-task-ended";
  EXPECT_EQ(note_count, 1u);
  const auto reference = experiments::run_experiment(h.request("runs-one-process"));
  EXPECT_EQ(Harness::terminal(first.run_dir), Harness::terminal(reference.run_dir));
}

TEST(SlurmSubmit, ANodeFailedTaskWhoseProcessStillHoldsItsLeaseIsNotResubmitted) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options());
  ASSERT_EQ(first.exit_code, 0) << first.message;
  for (std::size_t t : {0u, 1u, 2u, 3u, 5u}) EXPECT_EQ(h.run_task(first, t).exit_code, 0);
  // Task 4's slurmd is gone, but its k3lab runs on and renews its lease (from another host).
  core::LeaseHolder still_running;
  still_running.worker = "slurm-100-4";
  still_running.pid = 4321;
  still_running.host = "node9";
  still_running.slurm_job = "100_4";
  still_running.token = "T4";
  core::LeaseTable(first.run_dir, core::LeaseSettings{}).claim("u=4", still_running);
  {
    core::LedgerWriter shard(first.run_dir, "slurm-100-4");
    shard.append({{"kind", "attempt"}, {"unit", "u=4"}, {"attempt", 1}, {"worker", "slurm-100-4"}});
  }
  h.slurm.states = {{"100_[0-3]", "COMPLETED|0:0|vm"}, {"100_4", "NODE_FAIL|0:0|node9"}, {"100_5", "COMPLETED|0:0|vm"}};
  const auto status = exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}});
  EXPECT_EQ(status.status.count(exec::UnitPhase::Running), 1u);
  EXPECT_EQ(status.status.count(exec::UnitPhase::Pending), 0u);
  EXPECT_EQ(status.failures_recorded, 0u);
  const auto second = exec::submit_to_slurm(h.request(), h.options());
  EXPECT_EQ(second.exit_code, 0) << second.message;
  EXPECT_TRUE(second.job_id.empty());
  ASSERT_EQ(second.skipped_leased.size(), 1u);
  EXPECT_EQ(second.skipped_leased[0].rfind("u=4 (leased by worker slurm-100-4, pid 4321 on node9 (slurm 100_4)", 0), 0u)
      << second.skipped_leased[0];
  EXPECT_NE(second.message.find("live lease"), std::string::npos) << second.message;
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);

  // The old process finishes u=4 under its lease; nothing was run twice.
  core::LeaseTable table(first.run_dir, core::LeaseSettings{});
  ASSERT_TRUE(table.finish("u=4", "T4", [&] {
    core::LedgerWriter(first.run_dir, "slurm-100-4").append({{"kind", "result"}, {"unit", "u=4"}, {"data", 1}});
  }));
  const auto after = exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}});
  EXPECT_EQ(after.status.count(exec::UnitPhase::Result), 6u);
  EXPECT_TRUE(after.status.duplicates.empty());
}

TEST(SlurmSubmit, ATaskThatExitedWithAProtocolErrorIsNotResubmittedUntilAPersonSaysSo) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options(2));
  ASSERT_EQ(first.exit_code, 0) << first.message;
  EXPECT_EQ(h.run_task(first, 0).exit_code, 0);
  h.slurm.states = {{"100_0", "COMPLETED|0:0|vm"}, {"100_1", "FAILED|3:0|vm"}};  // exit 3: the protocol differs
  const auto status = exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}});
  EXPECT_EQ(status.status.count(exec::UnitPhase::Blocked), 3u);
  ASSERT_EQ(status.status.needs_person.size(), 1u);
  EXPECT_NE(status.status.needs_person[0].find("exit 3"), std::string::npos) << status.status.needs_person[0];

  const auto refused = exec::submit_to_slurm(h.request(), h.options(2));
  EXPECT_EQ(refused.exit_code, experiments::kExitError);
  EXPECT_NE(refused.message.find("--resubmit-errors"), std::string::npos) << refused.message;
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);
  // The mark is in the ledger: Slurm forgetting the job does not release it.
  h.slurm.states.clear();
  EXPECT_EQ(exec::submit_to_slurm(h.request(), h.options(2)).exit_code, experiments::kExitError);
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);

  auto fixed = h.options(2);
  fixed.resubmit_errors = true;
  const auto resubmitted = exec::submit_to_slurm(h.request(), fixed);
  ASSERT_EQ(resubmitted.exit_code, 0) << resubmitted.message;
  EXPECT_EQ(resubmitted.submitted_units, 3u);
  // The new job owns the units now: the old mark no longer blocks or shows.
  EXPECT_TRUE(exec::run_dir_status(first.run_dir, {h.slurm.runner(), true, {}}).status.needs_person.empty());
}

TEST(SlurmSubmit, TheInvalidRunRuleCountsOutOfMemoryOfTrainingUnits) {
  Harness h;
  // A training protocol: its invalid-run rule counts an out-of-memory unit as a failure of its arm.
  auto proxy = nlohmann::json::parse(kProtocol);
  proxy["evidence_class"] = "proxy-ablation";
  h.dir.write("experiments/memory-pool.json", proxy.dump());
  const auto first = exec::submit_to_slurm(h.request(), h.options());
  ASSERT_EQ(first.exit_code, 0) << first.message;
  for (std::size_t t : {1u, 2u}) {
    core::LedgerWriter shard(first.run_dir, "slurm-100-" + std::to_string(t));
    shard.append({{"kind", "attempt"}, {"unit", "u=" + std::to_string(t)}, {"attempt", 1},
                  {"worker", "slurm-100-" + std::to_string(t)}});
  }
  h.slurm.states = {{"100_0", "CANCELLED|0:0|"}, {"100_1", "OUT_OF_MEMORY|0:125|vm"}, {"100_2", "OUT_OF_MEMORY|0:125|vm"},
                    {"100_3", "CANCELLED|0:0|"}, {"100_4", "CANCELLED|0:0|"},         {"100_5", "CANCELLED|0:0|"}};
  const auto second = exec::submit_to_slurm(h.request(), h.options());
  EXPECT_EQ(second.exit_code, experiments::kExitWindowStopped) << second.message;
  EXPECT_EQ(second.failures_recorded, 2u);
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);
  bool stopped = false;
  for (const auto& r : core::read_ledger(first.run_dir).records) stopped |= r.value("kind", "") == "window";
  EXPECT_TRUE(stopped);
  // The local runner sees the same stop.
  auto local = h.request();
  local.run_dir = first.run_dir;
  EXPECT_TRUE(experiments::run_experiment(local).already_complete);
}

TEST(SlurmSubmit, RefusesWhileEarlierTasksAreQueuedOrRunning) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options(2));
  ASSERT_EQ(first.exit_code, 0) << first.message;
  h.slurm.states = {{"100_0", "COMPLETED|0:0|vm"}, {"100_1", "RUNNING|0:0|vm"}};
  const auto second = exec::submit_to_slurm(h.request(), h.options(2));
  EXPECT_EQ(second.exit_code, experiments::kExitError);
  EXPECT_NE(second.message.find("job 100 tasks 1"), std::string::npos) << second.message;
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);
  EXPECT_EQ(exec::read_job_records(first.run_dir).size(), 1u);

  // A task still COMPLETING after finishing every unit it holds blocks nothing.
  EXPECT_EQ(h.run_task(first, 0).exit_code, 0);
  h.slurm.states = {{"100_0", "COMPLETING|0:0|vm"}, {"100_1", "CANCELLED|0:0|vm"}};
  const auto third = exec::submit_to_slurm(h.request(), h.options(2));
  EXPECT_EQ(third.exit_code, 0) << third.message;
  EXPECT_EQ(task_indices(exec::read_job_records(first.run_dir).back()), (std::vector<std::size_t>{1}));
}

TEST(SlurmSubmit, DryRunPrintsTheScriptAndWritesNoJobOrFailure) {
  Harness h;
  const auto first = exec::submit_to_slurm(h.request(), h.options());
  ASSERT_EQ(first.exit_code, 0);
  {
    core::LedgerWriter shard(first.run_dir, "slurm-100-2");
    shard.append({{"kind", "attempt"}, {"unit", "u=2"}, {"attempt", 1}, {"worker", "slurm-100-2"}});
  }
  h.slurm.states = {{"100_[0-1,3-5]", "CANCELLED|0:0|"}, {"100_2", "NODE_FAIL|0:0|vm"}};
  auto options = h.options();
  options.dry_run = true;
  options.slurm_options = {"partition=debug"};
  const auto dry = exec::submit_to_slurm(h.request(), options);
  ASSERT_EQ(dry.exit_code, 0) << dry.message;
  EXPECT_TRUE(dry.job_id.empty());
  EXPECT_EQ(dry.tasks, 6u);  // u=2 is owed a note, not a failure: it runs again
  EXPECT_NE(dry.script.find("#SBATCH --array=0-5\n"), std::string::npos) << dry.script;
  EXPECT_NE(dry.script.find("# Resources: time: no estimate and no safety timeout: 2 h per unit"), std::string::npos) << dry.script;
  EXPECT_NE(dry.script.find("#SBATCH --partition=debug\n"), std::string::npos);

  // The CLI's pricing hook reaches the time limit: a GPU task's time follows the measured slowest arm.
  auto gpu_request = h.request();
  gpu_request.options["device"] = "cuda";
  options.refine_plan_details = [](nlohmann::json& details) {
    details["gpu_hours_by_arm"] = {{{"arm", "a"}, {"gpu_hours_per_run", 1.0}, {"measured", nlohmann::json::object()}}};
  };
  const auto priced = exec::submit_to_slurm(gpu_request, options);
  ASSERT_EQ(priced.exit_code, 0) << priced.message;
  EXPECT_NE(priced.script.find("3 x the plan's estimate of 1 h GPU per unit (measured throughput of the slowest arm, a)"),
            std::string::npos)
      << priced.script;
  EXPECT_NE(priced.script.find("#SBATCH --time=0-03:18:00\n"), std::string::npos) << priced.script;
  EXPECT_EQ(h.slurm.sbatch_calls(), 1u);
  EXPECT_EQ(exec::read_job_records(first.run_dir).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(first.run_dir / "ledger.slurm-accounting.jsonl"));
}

TEST(SlurmSubmit, ExplainsBadRequestsAndSbatchErrors) {
  Harness h;
  auto with_worker = h.request();
  with_worker.worker = "w1";
  EXPECT_THROW(exec::submit_to_slurm(with_worker, h.options()), std::invalid_argument);
  auto with_units = h.request();
  with_units.only_units = {"u=1"};
  EXPECT_THROW(exec::submit_to_slurm(with_units, h.options(2)), std::invalid_argument);
  auto unknown = h.request();
  unknown.only_units = {"u=99"};
  EXPECT_THROW(exec::submit_to_slurm(unknown, h.options()), std::invalid_argument);
  auto bad_option = h.options();
  bad_option.slurm_options = {"-p gpu"};
  EXPECT_THROW(exec::submit_to_slurm(h.request(), bad_option), std::invalid_argument);
  auto data_parallel = h.options();  // this experiment does not train: one process per unit
  data_parallel.slurm_options = {"ntasks=2"};
  try {
    exec::submit_to_slurm(h.request(), data_parallel);
    ADD_FAILURE() << "ntasks=2 accepted for an experiment without data-parallel training";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ntasks"), std::string::npos) << e.what();
  }

  h.slurm.sbatch_fails = true;
  try {
    exec::submit_to_slurm(h.request(), h.options());
    ADD_FAILURE() << "sbatch failure not reported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid partition"), std::string::npos) << e.what();
  }
  const auto runs = core::list_run_dirs(h.dir.path() / "runs", "memory-pool");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(exec::read_job_records(runs[0].path).empty());

  h.slurm.sbatch_fails = false;
  auto named = h.request();
  named.only_units = {"u=3", "u=1"};
  const auto submitted = exec::submit_to_slurm(named, h.options());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.message;
  EXPECT_EQ(task_indices(exec::read_job_records(runs[0].path).back()), (std::vector<std::size_t>{1, 3}));
}

TEST(SlurmSubmit, TasksRepeatTheDesignArgumentsOfTheSubmission) {
  auto r = Harness().request();
  r.set_overrides = {"seed=9"};
  r.options = {{"device", "cpu"}, {"threads", 4}, {"base_url", "http://127.0.0.1:8080/v1"}};
  const std::vector<std::string> expected = {"--unfrozen", "--set", "seed=9", "--base-url", "http://127.0.0.1:8080/v1",
                                             "--device", "cpu", "--threads", "4"};
  EXPECT_EQ(exec::task_run_arguments(r), expected);
  // The API experiments' run options reach the tasks too (a served name and the transport limits).
  r.options = {{"served_model", "kimi-k3-served"}, {"stall_timeout_s", 120}, {"requests_per_minute", 30}};
  const std::vector<std::string> api = {"--unfrozen", "--set", "seed=9", "--requests-per-minute", "30",
                                        "--served-model", "kimi-k3-served", "--stall-timeout", "120"};
  EXPECT_EQ(exec::task_run_arguments(r), api);
  r.options["colour"] = "red";
  EXPECT_THROW(exec::task_run_arguments(r), std::invalid_argument);
}

TEST(SlurmResources, FollowTheEvidenceClassProfileAndEstimate) {
  exec::ResourceInputs in;
  in.evidence_class = "proxy-ablation";
  in.profile = "full";
  in.gpu_hours_per_unit = 2.0;
  in.max_units_per_task = 2;
  // 3 x 2 GPU hours x 2 units x 1.1 = 13.2 h
  const std::vector<exec::SbatchOption> gpu = {{"cpus-per-task", "8"}, {"gres", "gpu:1"}, {"time", "0-13:12:00"}};
  EXPECT_EQ(exec::default_resources(in), gpu);
  in.device = "cpu";  // no CPU estimate, no safety timeout: 2 h x 2 units x 1.1 = 4.4 h
  EXPECT_EQ(exec::default_resources(in),
            (std::vector<exec::SbatchOption>{{"cpus-per-task", "1"}, {"time", "0-04:24:00"}}));
  in.device = "auto";
  in.profile = "smoke";
  in.threads = 3;
  EXPECT_EQ(exec::default_resources(in),
            (std::vector<exec::SbatchOption>{{"cpus-per-task", "3"}, {"time", "0-04:24:00"}}));
  in.evidence_class = "systems-simulation";
  in.device = "cuda";
  in.threads = 0;
  in.gpu_hours_per_unit = 0.01;
  in.max_units_per_task = 1;
  const std::vector<exec::SbatchOption> floor = {{"cpus-per-task", "8"}, {"gres", "gpu:1"}, {"time", "0-00:30:00"}};
  EXPECT_EQ(exec::default_resources(in), floor);
}

TEST(SlurmResources, EveryTaskGetsATimeCappedByTheSafetyTimeoutAndRanksGetAGpuEach) {
  exec::ResourceInputs in;
  in.evidence_class = "proxy-ablation";
  in.profile = "full";
  in.gpu_hours_per_unit = 30;        // 3 x 30 = 90 h per unit, above the protocol's 72 h
  in.safety_timeout_hours = 72;      // 72 x 1.1 = 79.2 h
  in.ranks_per_task = 4;
  const auto limit = exec::task_time_limit(in);
  EXPECT_DOUBLE_EQ(limit.hours, 72 * 1.1);
  EXPECT_NE(limit.basis.find("capped at the protocol's safety timeout of 72 h"), std::string::npos) << limit.basis;
  EXPECT_EQ(exec::default_resources(in),
            (std::vector<exec::SbatchOption>{{"cpus-per-task", "8"}, {"gpus-per-task", "1"}, {"time", "3-07:12:00"}}));
  exec::ResourceInputs cpu;
  cpu.cpu_hours_per_unit = 0.5;  // 3 x 0.5 x 4 units x 1.1 = 6.6 h
  cpu.max_units_per_task = 4;
  EXPECT_DOUBLE_EQ(exec::task_time_limit(cpu).hours, 6.6);
  EXPECT_NE(exec::task_time_limit(cpu).basis.find("CPU per unit"), std::string::npos);
  cpu.cpu_hours_per_unit.reset();
  cpu.safety_timeout_hours = 3;  // no estimate: the safety timeout per unit
  EXPECT_DOUBLE_EQ(exec::task_time_limit(cpu).hours, 3 * 4 * 1.1);

  EXPECT_EQ(exec::cpu_hours_per_unit({{"estimated_cpu_seconds", 36.0}}, 10), 0.001);
  EXPECT_FALSE(exec::cpu_hours_per_unit({{"estimated_cpu_seconds", 36.0}}, 0).has_value());
  EXPECT_EQ(exec::safety_timeout_hours({{"training", {{"safety_timeout_hours", 72}}}}), 72.0);
  EXPECT_FALSE(exec::safety_timeout_hours({{"steps", 5}}).has_value());
}

TEST(SlurmResources, TimeFormatAndEstimates) {
  EXPECT_EQ(exec::slurm_time(1.5), "0-01:30:00");
  EXPECT_EQ(exec::slurm_time(30), "1-06:00:00");
  EXPECT_EQ(exec::slurm_time(1.0 / 120), "0-00:01:00");
  EXPECT_THROW(exec::slurm_time(0), std::invalid_argument);
  EXPECT_EQ(exec::gpu_hours_per_unit({{"estimate", {{"gpu_hours_per_run", 0.25}}}}, 10), 0.25);
  EXPECT_EQ(exec::gpu_hours_per_unit({{"estimate", {{"gpu_hours_total", 5.0}}}}, 10), 0.5);
  EXPECT_FALSE(exec::gpu_hours_per_unit(nlohmann::json::object(), 10).has_value());
}

// With per-arm lines (the plan priced from `k3lab bench train` records) a task's time comes from the
// slowest arm, and says whether that figure was measured or is a floor.
TEST(SlurmResources, PerArmEstimatesGiveTheSlowestArmsHoursAndSayWhetherTheyWereMeasured) {
  nlohmann::json details = {{"estimate", {{"gpu_hours_per_run", 0.25}}},
                            {"gpu_hours_by_arm",
                             {{{"arm", "full"}, {"gpu_hours_per_run", 0.5}, {"measured", {{"tokens_per_s", 1e5}}}},
                              {{"arm", "kda"}, {"gpu_hours_per_run", 2.0}, {"measured", {{"tokens_per_s", 2e4}}}}}}};
  EXPECT_EQ(exec::gpu_hours_per_unit(details, 10), 2.0);
  EXPECT_EQ(exec::gpu_hours_basis(details), "measured throughput of the slowest arm, kda");
  exec::ResourceInputs in;
  in.evidence_class = "proxy-ablation";
  in.profile = "full";
  in.gpu_hours_per_unit = exec::gpu_hours_per_unit(details, 10);
  in.gpu_hours_basis = exec::gpu_hours_basis(details);
  const auto limit = exec::task_time_limit(in);  // 3 x 2 h x 1.1
  EXPECT_DOUBLE_EQ(limit.hours, 6.6);
  EXPECT_NE(limit.basis.find("2 h GPU per unit (measured throughput of the slowest arm, kda)"), std::string::npos)
      << limit.basis;

  details["gpu_hours_by_arm"][0].erase("measured");
  EXPECT_EQ(exec::gpu_hours_basis(details).rfind("a floor for at least one arm", 0), 0u);
  EXPECT_EQ(exec::gpu_hours_basis({{"estimate", {{"gpu_hours_per_run", 0.25}}}}), "");
  in.gpu_hours_basis.clear();
  EXPECT_NE(exec::task_time_limit(in).basis.find("(a lower bound)"), std::string::npos);
}

TEST(SlurmJobs, RecordsRoundTripAndATornLastLineIsIgnored) {
  k3lab::testing::TempDir dir;
  exec::JobRecord job;
  job.job_id = "12";
  job.job_name = "k3lab-memory-pool";
  job.submitted = "2026-01-01T00:00:00Z";
  job.layout = exec::TaskLayout::Shards;
  job.shard_count = 3;
  job.tasks = {{0, {"a", "d"}}, {2, {"c"}}};
  job.script = "slurm/job-12.sh";
  job.output = "/r/slurm/%A_%a.out";
  job.command = {"k3lab", "run", "memory-pool"};
  exec::append_job_record(dir.path(), job);
  exec::append_job_record(dir.path(), job);
  {
    std::ofstream(exec::job_records_path(dir.path()), std::ios::app) << "{\"job_id\": \"13\", \"job_na";
  }
  const auto jobs = exec::read_job_records(dir.path());
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].to_json(), job.to_json());
  EXPECT_EQ(jobs[0].log_of(2), "/r/slurm/12_2.out");
  dir.write("slurm-jobs.jsonl", "{\"job_id\": 12}\n");
  EXPECT_THROW(exec::read_job_records(dir.path()), std::runtime_error);
  dir.write("slurm-jobs.jsonl", "not json\n");
  EXPECT_THROW(exec::read_job_records(dir.path()), std::runtime_error);
}
