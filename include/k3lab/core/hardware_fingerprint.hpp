#pragma once
// The hardware fingerprint every attempt record carries (key "hardware"): the facts that make one
// unit's numbers comparable with another's (CPU, device, accelerator, LibTorch, build), plus "id", a
// short hash of them. Two units with different ids ran on different hardware or builds; the report
// flags such a comparison (experiments/hardware_check.hpp). Read without LibTorch: the accelerator
// from the NVIDIA driver's /proc files, LibTorch's version and CUDA flag from the build info. Nothing
// that varies from one moment to the next (load, free memory, host name) is part of it.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace k3lab::core {

// The CUDA devices a unit may use.
struct AcceleratorFacts {
  std::string model;         // e.g. "NVIDIA H200"; distinct models joined by " + " in bus order
  int count = 0;             // visible devices (CUDA_VISIBLE_DEVICES applied)
  std::string driver;        // the NVIDIA kernel module's version, "unknown" when unreadable
  std::string cuda_runtime;  // the CUDA LibTorch was built with, as the build info states it
};

struct HardwareFacts {
  std::string cpu_model;
  long logical_cores = 0;
  std::string device;                           // "cpu" or "cuda": where a training unit runs
  std::optional<AcceleratorFacts> accelerator;  // only when device is "cuda"
  std::string libtorch;                         // LibTorch version the binary was built against
  std::string build;                            // k3lab version and build info
};

// The facts as JSON plus "id" (fingerprint_id of the rest).
nlohmann::json fingerprint_json(const HardwareFacts& facts);

// The first 16 hex digits of the SHA-256 of the canonical JSON (sorted keys, no whitespace) of
// `facts` without its "id" key.
std::string fingerprint_id(const nlohmann::json& facts);

// The NVIDIA GPUs the driver lists under <proc_root>/driver/nvidia, restricted to `visible_devices`
// (CUDA_VISIBLE_DEVICES: indices in bus order or GPU UUIDs; null means unset, all visible).
// count 0 when the driver files are absent.
AcceleratorFacts nvidia_accelerators(const std::filesystem::path& proc_root, const char* visible_devices);

// LibTorch's version and CUDA as the build info string states them ("LibTorch 1.13.0 (CUDA OFF)"):
// {version, cuda}; "unknown" when the string does not say.
std::pair<std::string, std::string> libtorch_from_build_info(const std::string& build_info);

// Where a training unit runs for the command's --device ("auto", "cpu", "cuda[:N]"): "auto" is CUDA
// when LibTorch has CUDA and a device is visible, as train::resolve_device decides it.
std::string resolved_device(const std::string& device_option, const std::string& libtorch_cuda, int visible_devices);

// This machine and build, for a command run with `device_option`.
HardwareFacts this_machine(const std::string& device_option);

// fingerprint_json(this_machine(device_option)).
nlohmann::json hardware_fingerprint(const std::string& device_option);

}  // namespace k3lab::core
