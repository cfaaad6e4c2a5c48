#include "context_probe/repository_pin.hpp"

#include <map>
#include <mutex>
#include <string>

#include "k3lab/core/protocol.hpp"

namespace k3lab::experiments::context_probe {

std::shared_ptr<const validate::RepositorySnapshot> pinned_repository(const validate::RepositoryPin& pin) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const validate::RepositorySnapshot>> loaded;
  const std::filesystem::path folder = core::protocol_dir();
  const std::string key = folder.string() + "\n" + pin.to_json().dump();
  const std::lock_guard<std::mutex> lock(mutex);
  auto& snapshot = loaded[key];
  if (!snapshot) snapshot = validate::load_pinned_repository(pin, folder);
  return snapshot;
}

}  // namespace k3lab::experiments::context_probe
