#include "test_support.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "context_probe/units.hpp"
#include "k3lab/core/protocol.hpp"

namespace k3lab::context_probe_test {

std::filesystem::path protocol_file() {
  return std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments" / "context-probe.json";
}

nlohmann::json protocol_parameters(const std::string& profile) {
  const auto protocol = core::load_protocol(protocol_file(), &experiments::context_probe::parameter_schema());
  return protocol.parameters_for(profile);
}

experiments::context_probe::Parameters smoke_parameters() {
  return experiments::context_probe::parse_parameters(protocol_parameters("smoke"));
}

std::vector<experiments::Unit> smoke_units() { return experiments::context_probe::enumerate_units(smoke_parameters()); }

experiments::Unit smoke_unit(const std::string& id) {
  for (auto& u : smoke_units()) {
    if (u.id == id) return u;
  }
  throw std::invalid_argument("no smoke unit " + id);
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

std::vector<std::filesystem::path> files_containing(const std::filesystem::path& root, const std::string& needle) {
  std::vector<std::filesystem::path> hits;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().find(needle) != std::string::npos) hits.push_back(entry.path());
  }
  return hits;
}

}  // namespace k3lab::context_probe_test
