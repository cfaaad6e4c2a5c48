// The parts of the mock server's interface that do not need cpp-httplib: built with the server and
// with its stand-in (mock_server_unavailable.cpp) alike.
#include "k3lab/api/mock_server.hpp"

#include <spdlog/spdlog.h>

#include "k3lab/api/endpoint_choice.hpp"

namespace k3lab::api {

std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::none: return "none";
    case FaultKind::rate_limit: return "rate_limit";
    case FaultKind::overload: return "overload";
    case FaultKind::server_error: return "server_error";
    case FaultKind::unavailable: return "unavailable";
    case FaultKind::drop_mid_stream: return "drop_mid_stream";
    case FaultKind::slow_first_token: return "slow_first_token";
    case FaultKind::stall_keepalive: return "stall_keepalive";
  }
  return "none";
}

std::string render_prompt(const nlohmann::json& request) {
  std::string out;
  if (const auto tools = request.find("tools"); tools != request.end() && !tools->is_null()) {
    out += tools->dump();
    out += '\n';
  }
  if (const auto messages = request.find("messages"); messages != request.end() && messages->is_array()) {
    for (const auto& m : *messages) {
      out += m.dump();
      out += '\n';
    }
  }
  return out;
}

std::unique_ptr<MockServer> start_embedded_mock(MockServerOptions options, std::string_view experiment_id) {
  auto server = std::make_unique<MockServer>(std::move(options));
  server->start(0);
  spdlog::info("{}: no API key and no base URL; embedded mock server at {} ({})", experiment_id, server->base_url(),
               kSimulatedLabel);
  return server;
}

}  // namespace k3lab::api
