#pragma once
// Shared helpers of the agent-replay tests: the protocol's own parameters, an in-process mock server
// with the scripted agent that remembers every reasoning text it sent, a scratch folder, scoped
// environment variables, and a file search for the privacy checks.
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"
#include "k3lab/mock/agent_model.hpp"
#include "agent_replay/agent_run.hpp"
#include "agent_replay/parameters.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::agent_replay_test {

namespace ar = experiments::agent_replay;

std::filesystem::path protocol_file();
// parameters_for(profile) of experiments/agent-replay.json.
nlohmann::json protocol_parameters(const std::string& profile);
ar::Parameters parameters(const std::string& profile = "smoke");
// The unit of (task, arm, rep 1) as the enumeration builds it.
experiments::Unit unit_for(const ar::Parameters& p, int task, const std::string& arm);

// Collects every reasoning_content the wrapped model produced (thread-safe).
struct ReasoningLog {
  std::mutex mutex;
  std::vector<std::string> texts;
  api::MockModel wrap(api::MockModel inner);
  std::vector<std::string> snapshot();
};

// A MockServer with the scripted agent model, on an ephemeral loopback port.
struct AgentServer {
  ReasoningLog reasoning;
  std::unique_ptr<api::MockServer> server;
  explicit AgentServer(api::FaultPlan faults = {}, mock::AgentMockOptions model = {},
                       std::function<api::MockModel(api::MockModel)> extra_wrap = nullptr);
};

// An AgentRunner calling `server` (transport retries are the run's own).
ar::AgentRunner make_runner(const ar::Parameters& p, const AgentServer& server,
                            std::shared_ptr<api::Clock> clock = nullptr);

using ScratchDir = k3lab::testing::TempDir;

// Sets (or, with nullopt, unsets) a variable for the scope; restores the old value after.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The endpoint choice reads these; tests start from none of them.
struct CleanEnv {
  ScopedEnv key{"MOONSHOT_API_KEY", std::nullopt};
  ScopedEnv url{"K3LAB_BASE_URL", std::nullopt};
};

// Every regular file under `root` whose bytes contain `needle`.
std::vector<std::filesystem::path> files_containing(const std::filesystem::path& root, const std::string& needle);
std::string read_file(const std::filesystem::path& file);

}  // namespace k3lab::agent_replay_test
