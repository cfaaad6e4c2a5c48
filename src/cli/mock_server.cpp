// `k3lab mock-server --port N`: k3lab's OpenAI-compatible mock endpoint on 127.0.0.1, until Ctrl-C.
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "k3lab/mock/agent_model.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/mock/reader_model.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {
namespace {

// Agent-replay traffic (requests that declare tools) gets the scripted agent of agent-replay.
api::MockModel agent_traffic_model() { return mock::agent_mock_model(); }

// One server answers both API experiments: a request with a non-empty tools array is agent traffic,
// anything else is a context-probe prompt for the deterministic reader.
api::MockModel dispatch_by_traffic(api::MockModel context_model, api::MockModel agent_model) {
  return [context_model = std::move(context_model), agent_model = std::move(agent_model)](const nlohmann::json& request) {
    const auto tools = request.find("tools");
    const bool agent = tools != request.end() && tools->is_array() && !tools->empty();
    return agent ? agent_model(request) : context_model(request);
  };
}

}  // namespace

void register_mock_server(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "mock-server",
      "Local OpenAI-compatible endpoint used by tests and dry runs. It answers a strict client as the OpenAI API "
      "does (400 invalid_request_error naming the field, 404 model_not_found, usage only with "
      "stream_options.include_usage, GET /v1/models/{id}). Kimi divergences, labelled as such: usage is also "
      "repeated inside the finish chunk's choice (observed on K3); an assistant tool-call message without "
      "reasoning_content while thinking is on gets a 400 (Kimi's replay rule); reasoning arrives as "
      "delta.reasoning_content");
  struct Options {
    int port = 8089;
    std::uint64_t reader_seed = 0;
    std::vector<std::string> models = {"kimi-k3"};
    std::string tool_messages = "strict";
    bool require_key = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("--port", opt->port, "TCP port on 127.0.0.1 (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--reader-seed", opt->reader_seed, "Seed of the context-probe reader's recall draws")
      ->capture_default_str();
  cmd->add_option("--model", opt->models, "Model ids the server accepts and lists")->capture_default_str();
  cmd->add_option("--tool-messages", opt->tool_messages,
                  "A tool message answering no open tool_call_id: strict (HTTP 400) or lenient (ignored); "
                  "undocumented for Kimi, so an assumption either way")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->capture_default_str();
  cmd->add_flag("--require-key", opt->require_key,
                "Answer 401 unless the request's Bearer key equals $MOONSHOT_API_KEY (to test the auth path; the "
                "401 message echoes the presented key, as careless servers do, so clients must redact it)");
  cmd->callback([opt, &ctx] {
    validate::ReaderConfig reader;
    reader.seed = opt->reader_seed;
    api::MockServerOptions options;
    options.models = opt->models;
    options.strict_tool_messages = opt->tool_messages == "strict";
    if (opt->require_key) {
      const char* key = std::getenv(std::string(api::kApiKeyEnv).c_str());
      if (key == nullptr || *key == '\0') {
        throw std::invalid_argument("mock-server --require-key: export MOONSHOT_API_KEY, the key the server will accept");
      }
      options.required_api_key = std::string(key);
    }
    options.model = dispatch_by_traffic(mock::context_reader_model(reader), agent_traffic_model());
    api::MockServer server(std::move(options));
    const int port = server.start(opt->port);
    std::cout << "k3lab mock-server: serving " << server.base_url() << " ("
              << api::kSimulatedLabel << "); Ctrl-C stops it" << std::endl;
    while (!experiments::stop_flag().load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.stop();
    std::cout << "k3lab mock-server: stopped (port " << port << ")" << std::endl;
    ctx.exit_code = 0;
  });
}

}  // namespace k3lab::cli
