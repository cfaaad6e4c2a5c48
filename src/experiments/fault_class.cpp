#include "k3lab/experiments/fault_class.hpp"

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include "k3lab/core/environment_fault.hpp"

namespace k3lab::experiments {
namespace {

// errno values that say the machine, not the experiment, failed, with the fault's name (EFBIG: a file
// size limit, `ulimit -f` or a file system's maximum file size).
const std::vector<std::pair<int, const char*>>& environmental_errors() {
  static const std::vector<std::pair<int, const char*>> errors = {
      {ENOSPC, "disk-full"},           {EDQUOT, "disk-quota"}, {EFBIG, "file-size-limit"},    {EIO, "io-error"},
      {EROFS, "read-only-filesystem"}, {ENOLCK, "lock-lost"},  {ESTALE, "stale-file-handle"}, {ENODEV, "device-gone"}};
  return errors;
}

// Messages LibTorch's serializer puts in a c10::Error when a checkpoint cannot be written or read back.
const std::vector<std::pair<const char*, const char*>>& environmental_messages() {
  static const std::vector<std::pair<const char*, const char*>> messages = {
      {"PytorchStreamWriter failed", "checkpoint-write"}, {"PytorchStreamReader failed", "checkpoint-unreadable"}};
  return messages;
}

}  // namespace

FaultClass classify_exception(const std::exception& error) {
  if (dynamic_cast<const core::EnvironmentFault*>(&error)) return {true, "environment"};
  if (const auto* system = dynamic_cast<const std::system_error*>(&error)) {
    for (const auto& [code, name] : environmental_errors()) {
      if (system->code() == std::error_code(code, std::generic_category()) ||
          system->code() == std::error_code(code, std::system_category())) {
        return {true, name};
      }
    }
  }
  const std::string text = error.what();
  for (const auto& [code, name] : environmental_errors()) {
    if (text.find(std::strerror(code)) != std::string::npos) return {true, name};
  }
  for (const auto& [marker, name] : environmental_messages()) {
    if (text.find(marker) != std::string::npos) return {true, name};
  }
  return {false, "exception"};
}

}  // namespace k3lab::experiments
