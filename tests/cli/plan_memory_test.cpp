// `k3lab plan` prints a memory plan for every arm of the five proxy experiments (its parts add up to
// the step's peak, and every full profile fits one H200), and `run` refuses a design whose training
// step cannot fit the device it would train on before anything is recorded. Through the binary only;
// the estimate's agreement with measured peaks is tests/train/training_memory_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

const std::vector<std::string> kTrainingExperiments = {"hybrid-attention", "attn-res", "router-balance", "situ-qat",
                                                       "per-head-muon"};

std::int64_t bytes(const nlohmann::json& m, const char* key) { return m.at(key).get<std::int64_t>(); }

TEST(PlanMemory, EveryFullProfileArmHasAPlanWhosePartsAddUpAndFitsOneH200) {
  for (const auto& id : kTrainingExperiments) {
    const std::vector<std::string> args = {"plan", id, "--profile", "full", "--json"};
    const auto r = run_k3lab(args);
    ASSERT_EQ(r.exit_code, 0) << command_line(args) << "\n" << r.output();
    const auto arms = nlohmann::json::parse(r.out).at("details").at("gpu_hours_by_arm");
    ASSERT_FALSE(arms.empty()) << id;
    for (const auto& arm : arms) {
      SCOPED_TRACE(id + " " + arm.at("arm").get<std::string>());
      ASSERT_TRUE(arm.contains("memory"));
      const auto& m = arm.at("memory");
      std::int64_t saved = 0, largest = 0;
      for (const auto& [what, part] : m.at("activations").items()) saved += part.get<std::int64_t>();
      for (const auto& [what, part] : m.at("transients").items()) largest = std::max(largest, part.get<std::int64_t>());
      EXPECT_EQ(bytes(m, "activation_bytes"), saved);
      EXPECT_EQ(m.at("transients").at(m.at("largest_transient").get<std::string>()).get<std::int64_t>(), largest);
      EXPECT_EQ(bytes(m, "total_bytes"), bytes(m, "parameters_bytes") + bytes(m, "gradients_bytes") +
                                             bytes(m, "optimizer_state_bytes") + saved + largest);
      EXPECT_EQ(bytes(m, "gradients_bytes"), bytes(m, "parameters_bytes"));
      EXPECT_GT(bytes(m, "activation_bytes"), bytes(m, "parameters_bytes"));  // full shapes are activation-bound
      EXPECT_EQ(m.at("device"), "H200");
      EXPECT_TRUE(m.at("fits").get<bool>());
      EXPECT_LE(static_cast<double>(bytes(m, "total_bytes")), 0.9 * m.at("device_memory_bytes").get<double>());
    }
    const auto text = run_k3lab({"plan", id, "--profile", "full"});
    EXPECT_NE(text.out.find("memory per training step ("), std::string::npos) << text.output();
    EXPECT_NE(text.out.find("of the H200's 141.0 GB: fits"), std::string::npos) << text.output();
  }
}

TEST(PlanMemory, RunRefusesADesignWhoseStepCannotFitTheDeviceAndRecordsNothing) {
  const TempDir dir("k3lab-plan-memory");
  // One 65,536-token row: each MLA layer keeps 2 heads x 65,536^2 float32 probabilities (34 GB), more
  // than this machine's RAM; the other overrides only keep the design consistent.
  const std::vector<std::string> args = {
      "run", "hybrid-attention", "--unfrozen", "--out", dir.path().string(),
      "--set", "sequence_length=65536", "--set", "batch_tokens=65536", "--set", "micro_batch_rows=1",
      "--set", "token_budget=65536",
      "--set", "eval_interval_tokens=65536", "--set", "validation_tokens=65536",
      "--set", "downstream.at_tokens=[65536]", "--set", "long_context_eval.lengths=[131072]"};
  const auto r = run_k3lab(args);
  EXPECT_EQ(r.exit_code, 1) << command_line(args) << "\n" << r.output();
  EXPECT_NE(r.output().find("cannot start: arm full-attention needs an estimated "), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("for one training step of 1 row x 65536 tokens"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("this machine's RAM"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("nothing was recorded"), std::string::npos) << r.output();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find("ledger"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace k3lab::testing
