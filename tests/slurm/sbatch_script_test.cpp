// The sbatch script: option parsing, array lists (round trip through the parser of Slurm's own
// syntax), shell quoting (checked by bash), and what each array task actually executes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "common/temp_dir.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/exec/sbatch_script.hpp"
#include "k3lab/exec/slurm_state.hpp"
#include "script_runner.hpp"

using namespace k3lab;
using exec::ArrayTask;
using exec::SbatchOption;

TEST(SlurmOptions, AcceptsNameValueWithOrWithoutDashesAndFlags) {
  const auto options = exec::parse_slurm_options({"partition=gpu", "--time=04:00:00", "--exclusive", "comment=a b"});
  const std::vector<SbatchOption> expected = {
      {"partition", "gpu"}, {"time", "04:00:00"}, {"exclusive", ""}, {"comment", "a b"}};
  EXPECT_EQ(options, expected);
}

TEST(SlurmOptions, RefusesShortFormsReservedNamesAndScriptBreakingValues) {
  for (const std::string bad : {"-p gpu", "-pgpu", "array=0-3", "--requeue", "no-requeue", "wrap=ls", "parsable",
                                "Partition=gpu", "partition=", "partition =gpu", "comment=a\nb", "comment=\"x\"", ""}) {
    EXPECT_THROW(exec::parse_slurm_options({bad}), std::invalid_argument) << bad;
  }
  try {
    exec::parse_slurm_options({"array=0-3"});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
  }
}

TEST(SlurmOptions, OverridesReplaceDefaultsOfTheSameName) {
  const std::vector<SbatchOption> defaults = {{"job-name", "k3lab-x"}, {"cpus-per-task", "1"}, {"gres", "gpu:1"}};
  const auto merged = exec::merge_options(defaults, {{"cpus-per-task", "4"}, {"partition", "a100"}});
  const std::vector<SbatchOption> expected = {
      {"job-name", "k3lab-x"}, {"gres", "gpu:1"}, {"cpus-per-task", "4"}, {"partition", "a100"}};
  EXPECT_EQ(merged, expected);
}

TEST(ArrayRanges, CompressesRunsOfConsecutiveIndices) {
  EXPECT_EQ(exec::array_ranges({7, 0, 1, 2, 5, 8, 8}), "0-2,5,7-8");
  EXPECT_EQ(exec::array_ranges({3}), "3");
  EXPECT_EQ(exec::array_ranges({}), "");
}

TEST(ArrayRanges, RoundTripsThroughSlurmIndexSyntaxOnRandomSets) {
  core::Rng rng(core::stream_seed(20260707, {1}));
  for (int trial = 0; trial < 300; ++trial) {
    std::set<std::size_t> chosen;
    const auto n = 1 + rng.below(40);
    for (std::uint64_t i = 0; i < n; ++i) chosen.insert(rng.below(80));
    const std::vector<std::size_t> indices(chosen.begin(), chosen.end());
    std::vector<std::size_t> shuffled = indices;
    std::reverse(shuffled.begin(), shuffled.end());
    EXPECT_EQ(exec::expand_array_indices(exec::array_ranges(shuffled)), indices);
  }
}

TEST(ShellQuote, BashReadsBackTheExactText) {
  for (const std::string text : {"plain", "with space", "it's", "''", "$HOME `id` $(id) \\n", "mix=a/trace=b c",
                                 "\"double\"", "new\nline", "*?[a]"}) {
    const auto r = exec::run_command({"bash", "-c", "printf %s " + exec::shell_quote(text)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, text);
  }
}

namespace {

exec::SbatchScriptSpec spec_for(const k3lab::testing::TempDir& dir, const std::filesystem::path& binary) {
  exec::SbatchScriptSpec spec;
  spec.experiment_id = "memory-pool";
  spec.profile = "smoke";
  spec.run_dir = dir.path() / "runs" / "memory-pool" / "r1";
  spec.k3lab_binary = binary;
  spec.workdir = dir.path();
  spec.protocol_dir = dir.path() / "experiments";
  spec.run_arguments = {"--unfrozen", "--set", "a.b=it's 3"};
  spec.options = {{"job-name", "k3lab-memory-pool"}, {"output", (dir.path() / "out" / "%A_%a.out").string()},
                  {"comment", "two words"}};
  return spec;
}

std::vector<std::string> sbatch_lines(const std::string& script) {
  std::vector<std::string> lines;
  std::istringstream in(script);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#SBATCH", 0) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST(SbatchScript, PerUnitTaskRunsItsUnitIntoItsOwnShard) {
  k3lab::testing::TempDir dir;
  const auto binary = k3lab::testing::write_argument_printer(dir.path());
  auto spec = spec_for(dir, binary);
  spec.layout = exec::TaskLayout::PerUnit;
  spec.tasks = {ArrayTask{0, {"mix=a/trace=it's 1"}}, ArrayTask{2, {"mix=b/trace=2"}}, ArrayTask{3, {"mix=$c"}}};
  const auto script = exec::render_sbatch_script(spec);
  const std::vector<std::string> expected_lines = {
      "#SBATCH --array=0,2-3", "#SBATCH --no-requeue", "#SBATCH --job-name=k3lab-memory-pool",
      "#SBATCH --output=" + (dir.path() / "out" / "%A_%a.out").string(), "#SBATCH --comment=\"two words\""};
  EXPECT_EQ(sbatch_lines(script), expected_lines);
  const auto file = dir.write("job.sh", script);
  for (const auto& task : spec.tasks) {
    const auto run = k3lab::testing::run_array_task(file, "77", task.index);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<std::string> expected = {
        "run", "memory-pool", "--profile", "smoke", "--run-dir", spec.run_dir.string(), "--worker",
        "slurm-77-" + std::to_string(task.index), "--unit", task.units.front(), "--unfrozen", "--set", "a.b=it's 3"};
    EXPECT_EQ(run.arguments, expected);
  }
  const auto stray = k3lab::testing::run_array_task(file, "77", 1);
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("not part of this submission"), std::string::npos) << stray.err;
}

TEST(SbatchScript, ShardTaskRunsItsShardAndRequeueIsDeclared) {
  k3lab::testing::TempDir dir;
  const auto binary = k3lab::testing::write_argument_printer(dir.path());
  auto spec = spec_for(dir, binary);
  spec.layout = exec::TaskLayout::Shards;
  spec.shard_count = 4;
  spec.requeue = true;
  spec.run_arguments.clear();
  spec.tasks = {ArrayTask{1, {"u1", "u5"}}, ArrayTask{3, {"u3"}}};
  const auto script = exec::render_sbatch_script(spec);
  EXPECT_EQ(sbatch_lines(script).at(0), "#SBATCH --array=1,3");
  EXPECT_EQ(sbatch_lines(script).at(1), "#SBATCH --requeue");
  const auto file = dir.write("job.sh", script);
  const auto run = k3lab::testing::run_array_task(file, "9", 3);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> expected = {"run", "memory-pool", "--profile", "smoke", "--run-dir",
                                             spec.run_dir.string(), "--worker", "slurm-9-3", "--shard", "3/4"};
  EXPECT_EQ(run.arguments, expected);
}

TEST(SbatchScript, RanksPerTaskComeFromNtasksOrNtasksPerNodeTimesNodes) {
  EXPECT_EQ(exec::ranks_per_task({{"job-name", "x"}}), 1u);
  EXPECT_EQ(exec::ranks_per_task({{"ntasks", "4"}}), 4u);
  EXPECT_EQ(exec::ranks_per_task({{"ntasks-per-node", "2"}}), 2u);
  EXPECT_EQ(exec::ranks_per_task({{"nodes", "3"}, {"ntasks-per-node", "2"}}), 6u);
  EXPECT_EQ(exec::ranks_per_task({{"nodes", "3"}, {"ntasks-per-node", "2"}, {"ntasks", "5"}}), 5u);  // ntasks wins
  EXPECT_THROW(exec::ranks_per_task({{"nodes", "1-2"}, {"ntasks-per-node", "2"}}), std::invalid_argument);
  EXPECT_THROW(exec::ranks_per_task({{"ntasks", "0"}}), std::invalid_argument);
}

TEST(SbatchScript, DataParallelTaskStartsItsRanksWithSrunAndARendezvous) {
  k3lab::testing::TempDir dir;
  const auto binary = k3lab::testing::write_argument_printer(dir.path());
  // Stand-ins: srun prints what it was asked and the rendezvous it inherited, then runs the command
  // once; scontrol names the job's first node.
  const auto bin = dir.path() / "bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "srun") << "#!/bin/bash\necho \"srun $1 $2 $3\"\necho \"master $MASTER_ADDR:$MASTER_PORT\"\n"
                                 "shift 3\nexec \"$@\"\n";
  std::ofstream(bin / "scontrol") << "#!/bin/bash\n[ \"$1 $2 $3\" = \"show hostnames n[3-4]\" ] && printf 'n3\\nn4\\n'\n";
  for (const char* tool : {"srun", "scontrol"}) std::filesystem::permissions(bin / tool, std::filesystem::perms::owner_all);
  auto spec = spec_for(dir, binary);
  spec.experiment_id = "hybrid-attention";
  spec.run_arguments.clear();
  spec.layout = exec::TaskLayout::PerUnit;
  spec.ranks_per_task = 2;
  spec.tasks = {ArrayTask{1, {"arm=all-kda/seed=1"}}};
  const auto file = dir.write("job.sh", exec::render_sbatch_script(spec));
  const auto run = k3lab::testing::run_array_task(
      file, "77", 1,
      {"PATH=" + bin.string() + ":" + std::getenv("PATH"), "SLURM_JOB_ID=40123", "SLURM_JOB_NODELIST=n[3-4]"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_GE(run.arguments.size(), 3u);
  // One rank's exit ends the step (a hung peer is seen by the survivors, which exit 1).
  EXPECT_EQ(run.arguments[0], "srun --ntasks=2 --kill-on-bad-exit=1 --wait=120");
  EXPECT_EQ(run.arguments[1], "master n3:20123");  // 20000 + 40123 % 40000
  const std::vector<std::string> k3lab_args(run.arguments.begin() + 2, run.arguments.end());
  const std::vector<std::string> expected = {"run", "hybrid-attention", "--profile", "smoke", "--run-dir",
                                             spec.run_dir.string(), "--worker", "slurm-77-1", "--unit",
                                             "arm=all-kda/seed=1"};
  EXPECT_EQ(k3lab_args, expected);

  // scontrol answers nothing (a node list it cannot expand): the task stops before srun, saying why.
  const auto empty = k3lab::testing::run_array_task(
      file, "77", 1,
      {"PATH=" + bin.string() + ":" + std::getenv("PATH"), "SLURM_JOB_ID=40123", "SLURM_JOB_NODELIST=odd"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("no first host in SLURM_JOB_NODELIST='odd'"), std::string::npos) << empty.err;
  EXPECT_TRUE(empty.arguments.empty());
}

TEST(SbatchScript, RefusesInconsistentSpecs) {
  k3lab::testing::TempDir dir;
  auto spec = spec_for(dir, dir.path() / "k3lab");
  spec.tasks = {};
  EXPECT_THROW(exec::render_sbatch_script(spec), std::invalid_argument);
  spec.tasks = {ArrayTask{0, {"a", "b"}}};
  EXPECT_THROW(exec::render_sbatch_script(spec), std::invalid_argument);  // per-unit task with two units
  spec.tasks = {ArrayTask{0, {"a"}}, ArrayTask{0, {"b"}}};
  EXPECT_THROW(exec::render_sbatch_script(spec), std::invalid_argument);  // shared index
  spec.layout = exec::TaskLayout::Shards;
  spec.shard_count = 2;
  spec.tasks = {ArrayTask{2, {"a"}}};
  EXPECT_THROW(exec::render_sbatch_script(spec), std::invalid_argument);  // index >= n
  spec.tasks = {ArrayTask{1, {"a"}}};
  spec.run_dir = "runs/relative";
  EXPECT_THROW(exec::render_sbatch_script(spec), std::invalid_argument);
}
