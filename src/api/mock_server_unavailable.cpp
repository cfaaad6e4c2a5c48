// Built when cpp-httplib was not found at configure time: the mock server explains how to get it.
#include <stdexcept>

#include "k3lab/api/mock_server.hpp"

namespace k3lab::api {

struct MockServer::Impl {};

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
