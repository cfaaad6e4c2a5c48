// Built when cpp-httplib was not found at configure time: the mock server explains how to get it.
#include <stdexcept>

#include "k3lab/api/mock_server.hpp"
#include "k3lab/api/token_estimate.hpp"

namespace k3lab::api {

struct MockServer::Impl {};

std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::none: return "none";
    case FaultKind::rate_limit: return "rate_limit";
    case FaultKind::overload: return "overload";
    case FaultKind::server_error: return "server_error";
    case FaultKind::unavailable: return "unavailable";
    case FaultKind::drop_mid_stream: return "drop_mid_stream";
    case FaultKind::slow_first_token: return "slow_first_token";
  }
  return "none";
}

std::string render_prompt(const nlohmann::json& request) {
  std::string out;
  if (const auto tools = request.find("tools"); tools != request.end() && !tools->is_null()) out += tools->dump() + "\n";
  if (const auto messages = request.find("messages"); messages != request.end() && messages->is_array()) {
    for (const auto& m : *messages) out += m.dump() + "\n";
  }
  return out;
}

MockServer::MockServer(MockServerOptions) {
  throw std::runtime_error(
      "k3lab was built without cpp-httplib, so the mock server is unavailable: install libcpp-httplib-dev and "
      "reconfigure");
}
MockServer::~MockServer() = default;
int MockServer::start(int) { return 0; }
void MockServer::stop() {}
void MockServer::serve(int) {}
int MockServer::port() const { return 0; }
std::string MockServer::base_url() const { return {}; }
std::vector<MockRequestRecord> MockServer::received() const { return {}; }
std::size_t MockServer::max_concurrent_requests() const { return 0; }
void MockServer::clear_cache() {}

}  // namespace k3lab::api
