// One rank of the data-parallel tests (distributed_test.cpp starts two): joins the group from the
// usual environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, K3LAB_DIST_TIMEOUT), trains
// data_parallel_config() and writes its result as JSON. Test seams, from the environment:
//   K3LAB_TEST_OUT               where to write the JSON (required)
//   K3LAB_TEST_CHECKPOINT_DIR    checkpoint folder (shared by the ranks)
//   K3LAB_TEST_KILL_AFTER_STEP   this rank SIGKILLs itself after that step (a dead peer)
//   K3LAB_TEST_NAN_AT_STEP       this rank's loss is NaN at that step (a rank-local failure)
//   K3LAB_TEST_BATCH_TOKENS      replaces batch_tokens, keeping 6 steps and an evaluation every 2
//                                (rows that do not split across the ranks)
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "distributed_support.hpp"
#include "k3lab/train/distributed.hpp"

namespace {

std::optional<std::int64_t> env_int(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::stoll(value);
}

}  // namespace

int main() {
  using namespace k3lab::train;
  const char* out = std::getenv("K3LAB_TEST_OUT");
  if (!out) {
    std::cerr << "distributed_worker: set K3LAB_TEST_OUT (distributed_test starts this program)\n";
    return 2;
  }
  torch::set_num_threads(1);
  nlohmann::json report;
  try {
    DistributedContext context(launch_environment_from_process(), torch::Device(torch::kCPU));
    auto config = testing::data_parallel_config();
    config.distributed = &context;
    if (const char* dir = std::getenv("K3LAB_TEST_CHECKPOINT_DIR")) config.checkpoint_dir = dir;
    if (const auto tokens = env_int("K3LAB_TEST_BATCH_TOKENS")) {
      config.batch_tokens = *tokens;
      config.token_budget = 6 * *tokens;
      config.eval_interval_tokens = 2 * *tokens;
    }
    TrainerHooks hooks;
    if (const auto kill_after = env_int("K3LAB_TEST_KILL_AFTER_STEP")) {
      hooks.crash_after_step = [step = *kill_after](std::int64_t done) {
        if (done == step) std::raise(SIGKILL);
        return false;
      };
    }
    if (const auto nan_at = env_int("K3LAB_TEST_NAN_AT_STEP")) {
      hooks.transform_loss = [step = *nan_at](std::int64_t at, const torch::Tensor& loss) {
        return at == step ? loss * std::numeric_limits<double>::quiet_NaN() : loss;
      };
    }
    const auto result = train(config, testing::data_parallel_corpus(), hooks);
    report = testing::result_json(result);
    report["rank"] = context.rank();
    if (result.failure_class == "rank-failure") report["root_reachable"] = context.root_reachable();
  } catch (const std::exception& e) {
    report = {{"error", e.what()}};
  }
  std::ofstream(out) << report.dump();
  return 0;
}
