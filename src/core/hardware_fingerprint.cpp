#include "k3lab/core/hardware_fingerprint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "k3lab/build_info.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {
namespace {

constexpr std::size_t kIdHexDigits = 16;

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

bool is_version_token(const std::string& token) {
  return token.find('.') != std::string::npos && std::all_of(token.begin(), token.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
         });
}

// The driver version from the first line of /proc/driver/nvidia/version, e.g. "NVRM version: NVIDIA
// UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 ..." or "... Open Kernel Module for x86_64  550.54.15 ...":
// the first dotted number after "Module".
std::string driver_version(const std::filesystem::path& version_file) {
  std::ifstream in(version_file);
  std::string line;
  if (!std::getline(in, line)) return "unknown";
  const auto module = line.find("Module");
  if (module == std::string::npos) return "unknown";
  std::istringstream tokens(line.substr(module));
  std::string token;
  while (tokens >> token) {
    if (is_version_token(token)) return token;
  }
  return "unknown";
}

struct Gpu {
  std::string model;
  std::string uuid;
};

// One GPU's "information" file: "Model: \t NVIDIA H200", "GPU UUID: \t GPU-...", one fact a line.
Gpu read_gpu(const std::filesystem::path& information) {
  Gpu gpu;
  std::ifstream in(information);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = trimmed(line.substr(0, colon));
    if (key == "Model") gpu.model = trimmed(line.substr(colon + 1));
    if (key == "GPU UUID") gpu.uuid = trimmed(line.substr(colon + 1));
  }
  return gpu;
}

// The GPUs CUDA_VISIBLE_DEVICES leaves: indices into `gpus` (bus order) or UUID prefixes; like CUDA,
// the list ends at the first entry that names no device ("-1" hides them all).
std::vector<Gpu> visible(const std::vector<Gpu>& gpus, const char* visible_devices) {
  if (!visible_devices) return gpus;
  std::vector<Gpu> chosen;
  std::vector<bool> taken(gpus.size(), false);
  std::istringstream entries(visible_devices);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    entry = trimmed(entry);
    std::optional<std::size_t> index;
    if (!entry.empty() &&
        std::all_of(entry.begin(), entry.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      if (const auto i = std::stoul(entry); i < gpus.size()) index = i;
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (std::size_t i = 0; i < gpus.size() && !index; ++i) {
        if (gpus[i].uuid.rfind(entry, 0) == 0) index = i;
      }
    }
    if (!index || taken[*index]) break;
    taken[*index] = true;
    chosen.push_back(gpus[*index]);
  }
  return chosen;
}

}  // namespace

std::string fingerprint_id(const nlohmann::json& facts) {
  nlohmann::json rest = facts;
  rest.erase("id");
  return sha256_hex(rest.dump()).substr(0, kIdHexDigits);
}

nlohmann::json fingerprint_json(const HardwareFacts& facts) {
  nlohmann::json j = {{"cpu", {{"model", facts.cpu_model}, {"logical_cores", facts.logical_cores}}},
                      {"device", facts.device},
                      {"libtorch", facts.libtorch},
                      {"build", facts.build}};
  if (facts.accelerator) {
    const auto& a = *facts.accelerator;
    j["accelerator"] = {{"model", a.model}, {"count", a.count}, {"driver", a.driver}, {"cuda_runtime", a.cuda_runtime}};
  }
  j["id"] = fingerprint_id(j);
  return j;
}

AcceleratorFacts nvidia_accelerators(const std::filesystem::path& proc_root, const char* visible_devices) {
  const auto driver_dir = proc_root / "driver" / "nvidia";
  AcceleratorFacts facts;
  facts.driver = driver_version(driver_dir / "version");
  std::vector<std::filesystem::path> buses;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(driver_dir / "gpus", error))
    buses.push_back(entry.path());
  std::sort(buses.begin(), buses.end());  // PCI bus ids: the order CUDA_DEVICE_ORDER=PCI_BUS_ID numbers them in
  std::vector<Gpu> gpus;
  for (const auto& bus : buses) gpus.push_back(read_gpu(bus / "information"));
  const auto chosen = visible(gpus, visible_devices);
  facts.count = static_cast<int>(chosen.size());
  std::vector<std::string> models;
  for (const auto& gpu : chosen) {
    const auto model = gpu.model.empty() ? std::string("unknown") : gpu.model;
    if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
  }
  for (const auto& model : models) facts.model += (facts.model.empty() ? "" : " + ") + model;
  return facts;
}

std::pair<std::string, std::string> libtorch_from_build_info(const std::string& build_info) {
  const std::string marker = "LibTorch ", cuda_marker = " (CUDA ";
  const auto start = build_info.find(marker);
  if (start == std::string::npos) return {"unknown", "unknown"};
  const auto version_start = start + marker.size();
  const auto cuda = build_info.find(cuda_marker, version_start);
  const auto version_end = std::min(cuda, build_info.find(';', version_start));
  std::string version = trimmed(build_info.substr(version_start, version_end - version_start));
  if (version.empty()) version = "unknown";
  if (cuda == std::string::npos || cuda != version_end) return {version, "unknown"};
  const auto cuda_start = cuda + cuda_marker.size();
  const auto close = build_info.find(')', cuda_start);
  if (close == std::string::npos) return {version, "unknown"};
  return {version, trimmed(build_info.substr(cuda_start, close - cuda_start))};
}

std::string resolved_device(const std::string& device_option, const std::string& libtorch_cuda, int visible_devices) {
  if (device_option.rfind("cuda", 0) == 0) return "cuda";
  const bool libtorch_has_cuda = libtorch_cuda != "OFF" && libtorch_cuda != "unknown";
  if (device_option == "auto" && libtorch_has_cuda && visible_devices > 0) return "cuda";
  return "cpu";
}

HardwareFacts this_machine(const std::string& device_option) {
  HardwareFacts facts;
  facts.cpu_model = cpu_model();
  facts.logical_cores = sysconf(_SC_NPROCESSORS_ONLN);
  const auto [libtorch, libtorch_cuda] = libtorch_from_build_info(build::kInfo);
  facts.libtorch = libtorch;
  facts.build = std::string(build::kVersion) + "; " + build::kInfo;
  auto accelerator = nvidia_accelerators("/proc", std::getenv("CUDA_VISIBLE_DEVICES"));
  facts.device = resolved_device(device_option, libtorch_cuda, accelerator.count);
  if (facts.device == "cuda") {
    accelerator.cuda_runtime = libtorch_cuda;
    facts.accelerator = accelerator;
  }
  return facts;
}

nlohmann::json hardware_fingerprint(const std::string& device_option) {
  return fingerprint_json(this_machine(device_option));
}

}  // namespace k3lab::core
