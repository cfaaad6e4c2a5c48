#include "test_support.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "agent_replay/units.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/core/protocol.hpp"

namespace k3lab::agent_replay_test {

std::filesystem::path protocol_file() {
  return std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments" / "agent-replay.json";
}

nlohmann::json protocol_parameters(const std::string& profile) {
  const auto protocol = core::load_protocol(protocol_file(), &ar::parameter_schema());
  return protocol.parameters_for(profile);
}

ar::Parameters parameters(const std::string& profile) { return ar::parse_parameters(protocol_parameters(profile)); }

experiments::Unit unit_for(const ar::Parameters& p, int task, const std::string& arm) {
  ar::Parameters q = p;
  q.task_count = std::max(q.task_count, task);
  q.repetitions = 1;
  for (auto& u : ar::enumerate_units(q)) {
    if (u.spec["task"] == task && u.spec["arm"] == arm) return u;
  }
  throw std::invalid_argument("no unit for task " + std::to_string(task) + " arm " + arm);
}

api::MockModel ReasoningLog::wrap(api::MockModel inner) {
  return [this, inner](const nlohmann::json& request) {
    auto reply = inner(request);
    std::lock_guard lock(mutex);
    if (!reply.reasoning_content.empty()) texts.push_back(reply.reasoning_content);
    return reply;
  };
}

std::vector<std::string> ReasoningLog::snapshot() {
  std::lock_guard lock(mutex);
  return texts;
}

AgentServer::AgentServer(api::FaultPlan faults, mock::AgentMockOptions model,
                         std::function<api::MockModel(api::MockModel)> extra_wrap) {
  api::MockServerOptions options;
  api::MockModel inner = mock::agent_mock_model(model);
  if (extra_wrap) inner = extra_wrap(inner);
  options.model = reasoning.wrap(inner);
  options.faults = faults;
  options.log_bodies = true;
  server = std::make_unique<api::MockServer>(std::move(options));
  server->start(0);
}

ar::AgentRunner make_runner(const ar::Parameters& p, const AgentServer& server, std::shared_ptr<api::Clock> clock) {
  if (!clock) clock = std::make_shared<api::ManualClock>();
  api::ClientConfig config;
  config.base_url = server.server->base_url();
  config.retry.max_sends = 1;
  ar::AgentRunSetup setup;
  setup.parameters = p;
  setup.retry = api::RetryPolicy::with_retries(p.transport_retries);
  setup.client = std::make_shared<const api::ChatClient>(config, clock);
  setup.clock = clock;
  setup.endpoint_name = "test-mock";
  setup.window.start = clock->utc_now();
  setup.window.hours = p.test_window_hours;
  return ar::AgentRunner(std::move(setup));
}

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) old_ = old;
  if (value) {
    ::setenv(name_.c_str(), value->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    ::setenv(name_.c_str(), old_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> files_containing(const std::filesystem::path& root, const std::string& needle) {
  std::vector<std::filesystem::path> hits;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && read_file(entry.path()).find(needle) != std::string::npos) hits.push_back(entry.path());
  }
  return hits;
}

}  // namespace k3lab::agent_replay_test
