// The process-wide thread policy through the binary (issue 19, core/thread_policy.hpp): `run` records
// it in the manifest, OpenMP's wait policy is passive unless the user set one, and --version names it.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

nlohmann::json only_manifest(const std::filesystem::path& runs) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(runs)) {
    if (entry.path().filename() == "manifest.json") found.push_back(entry.path());
  }
  EXPECT_EQ(found.size(), 1u);
  if (found.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(std::ifstream(found.front()));
}

nlohmann::json policy_of_run(const std::vector<std::string>& extra, std::optional<std::string> wait_policy,
                             const std::string& experiment = "situ-qat",
                             std::optional<std::string> spin_count = std::nullopt) {
  TempDir dir;
  ProcessOptions options;
  options.env["K3LAB_PROTOCOL_DIR"] = (source_dir() / "experiments").string();
  options.env["OMP_WAIT_POLICY"] = std::move(wait_policy);
  options.env["GOMP_SPINCOUNT"] = std::move(spin_count);
  std::vector<std::string> args = {"run", experiment, "--profile", "smoke", "--out", (dir.path() / "runs").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto result = run_k3lab(args, options);
  EXPECT_EQ(result.exit_code, 0) << command_line(args) << "\n" << result.output();
  return only_manifest(dir.path() / "runs").value("thread_policy", nlohmann::json::object());
}

TEST(ThreadPolicyCli, RunRecordsTheThreadsAndMakesIdleOpenMpWorkersSleep) {
  const auto policy = policy_of_run({"--threads", "1"}, std::nullopt);
  EXPECT_EQ(policy.value("threads", 0), 1) << policy.dump();
  EXPECT_EQ(policy.value("source", ""), "--threads");
  EXPECT_EQ(policy.value("openmp_wait_policy", ""), "PASSIVE") << "OMP_WAIT_POLICY unset: run re-executes with it";
  EXPECT_EQ(policy.value("openmp_spin_count", ""), "10000") << "a short spin before sleeping";
}

TEST(ThreadPolicyCli, AUserSpinCountIsKeptWhenTheWaitPolicyIsSet) {
  const auto policy = policy_of_run({"--threads", "1"}, std::nullopt, "situ-qat", std::string("500"));
  EXPECT_EQ(policy.value("openmp_wait_policy", ""), "PASSIVE") << policy.dump();
  EXPECT_EQ(policy.value("openmp_spin_count", ""), "500") << policy.dump();
}

// The simulator and the API experiments never start LibTorch's pool: no restart (it costs a second
// LibTorch load), and the manifest says the wait policy was left unset.
TEST(ThreadPolicyCli, AnExperimentWithoutLibTorchIsNotRestarted) {
  const auto policy = policy_of_run({}, std::nullopt, "memory-pool");
  EXPECT_EQ(policy.value("openmp_wait_policy", ""), "unset") << policy.dump();
}

TEST(ThreadPolicyCli, DefaultThreadsAreTheAffinityCoresAndAUserWaitPolicyIsKept) {
  const auto policy = policy_of_run({}, std::string("active"));
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(policy.value("threads", 0), CPU_COUNT(&set)) << policy.dump();
  EXPECT_EQ(policy.value("source", ""), "CPU affinity");
  EXPECT_EQ(policy.value("openmp_wait_policy", ""), "active");
}

TEST(ThreadPolicyCli, VersionNamesTheDefaultThreads) {
  const auto result = run_k3lab({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("threads: "), std::string::npos) << result.out;
  // The revision of the tree it was built from (a checkout here) and the analysis it renders with.
  EXPECT_NE(result.out.find("source revision: "), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("source revision: unknown"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("analysis: version "), std::string::npos) << result.out;
}

}  // namespace
}  // namespace k3lab::testing
