// The hardware fingerprint (core/hardware_fingerprint.hpp): its id is the SHA-256 prefix of the
// canonical facts (recomputed here from a hand-written document), stable when computed twice and
// changed by every fact; the NVIDIA driver files are read from a hand-made /proc tree; and every
// attempt record the runner writes carries this machine's fingerprint.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "common/temp_dir.hpp"
#include "indexed_units_experiment.hpp"
#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/experiments/runner.hpp"
#include "test_protocol_fixture.hpp"

namespace k3lab::core {
namespace {

HardwareFacts hw_cuda_facts() {
  HardwareFacts f;
  f.cpu_model = "AMD EPYC 9654";
  f.logical_cores = 16;
  f.device = "cuda";
  f.accelerator = AcceleratorFacts{"NVIDIA H200", 1, "550.54.15", "12.1"};
  f.libtorch = "2.1.0";
  f.build = "0.1.0; GNU 12.2.0; Release; LibTorch 2.1.0 (CUDA 12.1)";
  return f;
}

TEST(HardwareFingerprint, TheIdIsTheShaPrefixOfTheCanonicalFacts) {
  const auto fingerprint = fingerprint_json(hw_cuda_facts());
  // The same document written by hand; dump() sorts keys and drops whitespace.
  const nlohmann::json expected = {
      {"cpu", {{"model", "AMD EPYC 9654"}, {"logical_cores", 16}}},
      {"device", "cuda"},
      {"accelerator", {{"model", "NVIDIA H200"}, {"count", 1}, {"driver", "550.54.15"}, {"cuda_runtime", "12.1"}}},
      {"libtorch", "2.1.0"},
      {"build", "0.1.0; GNU 12.2.0; Release; LibTorch 2.1.0 (CUDA 12.1)"}};
  const std::string id = sha256_hex(expected.dump()).substr(0, 16);
  EXPECT_EQ(fingerprint.at("id"), id);
  auto without_id = fingerprint;
  without_id.erase("id");
  EXPECT_EQ(without_id, expected);
  EXPECT_EQ(fingerprint_id(fingerprint), id);  // a recorded "id" is not hashed into itself
}

TEST(HardwareFingerprint, EveryFactChangesTheIdAndNothingElseDoes) {
  const std::string base = fingerprint_json(hw_cuda_facts()).at("id");
  EXPECT_EQ(fingerprint_json(hw_cuda_facts()).at("id"), base);
  const std::vector<std::function<void(HardwareFacts&)>> changes = {
      [](HardwareFacts& f) { f.cpu_model = "Intel Xeon Platinum 8480+"; },
      [](HardwareFacts& f) { f.logical_cores = 32; },
      [](HardwareFacts& f) { f.accelerator->model = "NVIDIA A100-SXM4-80GB"; },
      [](HardwareFacts& f) { f.accelerator->count = 2; },
      [](HardwareFacts& f) { f.accelerator->driver = "535.104.05"; },
      [](HardwareFacts& f) { f.accelerator->cuda_runtime = "11.8"; },
      [](HardwareFacts& f) { f.libtorch = "1.13.0"; },
      [](HardwareFacts& f) { f.build = "0.1.0; Clang 16; Release; LibTorch 2.1.0 (CUDA 12.1)"; },
      [](HardwareFacts& f) {
        f.device = "cpu";
        f.accelerator.reset();
      }};
  std::set<std::string> ids = {base};
  for (const auto& change : changes) {
    auto facts = hw_cuda_facts();
    change(facts);
    ids.insert(fingerprint_json(facts).at("id").get<std::string>());
  }
  EXPECT_EQ(ids.size(), changes.size() + 1);  // each change gives an id of its own
}

TEST(HardwareFingerprint, ThisMachineIsStableAndHoldsNoMomentaryFact) {
  const auto first = hardware_fingerprint("cpu");
  EXPECT_EQ(hardware_fingerprint("cpu"), first);
  EXPECT_EQ(first.at("device"), "cpu");
  EXPECT_FALSE(first.contains("accelerator"));  // a CPU unit's numbers do not depend on a GPU beside it
  EXPECT_EQ(first.at("id").get<std::string>().size(), 16u);
  std::set<std::string> keys;
  for (const auto& [key, value] : first.items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"cpu", "device", "libtorch", "build", "id"}));
  EXPECT_EQ(first.at("cpu").size(), 2u);  // model and logical cores: no load, no free memory
}

TEST(HardwareFingerprint, TheBuildInfoNamesLibTorchAndItsCuda) {
  EXPECT_EQ(libtorch_from_build_info("GNU 12.2.0; Release; LibTorch 1.13.0 (CUDA OFF); k3lab CUDA kernels ON"),
            std::make_pair(std::string("1.13.0"), std::string("OFF")));
  EXPECT_EQ(libtorch_from_build_info("GNU 13; Release; LibTorch 2.1.0 (CUDA 12.1); k3lab CUDA kernels ON"),
            std::make_pair(std::string("2.1.0"), std::string("12.1")));
  EXPECT_EQ(libtorch_from_build_info("GNU 13; LibTorch 2.1.0; Release"),
            std::make_pair(std::string("2.1.0"), std::string("unknown")));
  EXPECT_EQ(libtorch_from_build_info("GNU 13; Release"),
            std::make_pair(std::string("unknown"), std::string("unknown")));
}

TEST(HardwareFingerprint, AutoIsCudaOnlyWithACudaLibTorchAndAVisibleDevice) {
  EXPECT_EQ(resolved_device("auto", "ON", 1), "cuda");
  EXPECT_EQ(resolved_device("auto", "12.1", 2), "cuda");
  EXPECT_EQ(resolved_device("auto", "OFF", 8), "cpu");
  EXPECT_EQ(resolved_device("auto", "unknown", 8), "cpu");
  EXPECT_EQ(resolved_device("auto", "ON", 0), "cpu");
  EXPECT_EQ(resolved_device("cpu", "ON", 8), "cpu");
  EXPECT_EQ(resolved_device("cuda", "OFF", 0), "cuda");  // asked for: the unit itself refuses it
  EXPECT_EQ(resolved_device("cuda:1", "ON", 2), "cuda");
}

// A /proc with the driver's files for GPUs on three buses, written out of bus order.
struct HwFakeProc {
  testing::TempDir dir{"k3lab-hw-proc"};
  HwFakeProc() {
    dir.write("driver/nvidia/version",
              "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)\n"
              "GCC version:  gcc version 12.2.0\n");
    gpu("0000:c1:00.0", "NVIDIA A100-SXM4-80GB", "GPU-cccc1111");
    gpu("0000:41:00.0", "NVIDIA H200", "GPU-aaaa1111");
    gpu("0000:81:00.0", "NVIDIA H200", "GPU-bbbb1111");
  }
  void gpu(const std::string& bus, const std::string& model, const std::string& uuid) {
    dir.write("driver/nvidia/gpus/" + bus + "/information",
              "Model: \t\t " + model + "\nIRQ:   \t\t 42\nGPU UUID: \t " + uuid + "\nBus Type: \t PCIe\n");
  }
};

TEST(HardwareFingerprint, DriverFilesGiveModelCountAndDriverUnderCudaVisibleDevices) {
  const HwFakeProc proc;
  const auto all = nvidia_accelerators(proc.dir.path(), nullptr);
  EXPECT_EQ(all.count, 3);
  EXPECT_EQ(all.model, "NVIDIA H200 + NVIDIA A100-SXM4-80GB");  // bus order: 41, 81, c1
  EXPECT_EQ(all.driver, "550.54.15");
  const auto second = nvidia_accelerators(proc.dir.path(), "1");
  EXPECT_EQ(second.count, 1);
  EXPECT_EQ(second.model, "NVIDIA H200");  // bus 81
  const auto by_uuid = nvidia_accelerators(proc.dir.path(), "GPU-cccc");
  EXPECT_EQ(by_uuid.count, 1);
  EXPECT_EQ(by_uuid.model, "NVIDIA A100-SXM4-80GB");
  const auto cut = nvidia_accelerators(proc.dir.path(), "0,7,2");  // CUDA stops at the first bad entry
  EXPECT_EQ(cut.count, 1);
  EXPECT_EQ(cut.model, "NVIDIA H200");
  EXPECT_EQ(nvidia_accelerators(proc.dir.path(), "-1").count, 0);
  EXPECT_EQ(nvidia_accelerators(proc.dir.path(), "").count, 0);
}

TEST(HardwareFingerprint, WithoutTheDriverThereIsNoAccelerator) {
  const testing::TempDir empty("k3lab-hw-noproc");
  const auto none = nvidia_accelerators(empty.path(), nullptr);
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.model, "");
  EXPECT_EQ(none.driver, "unknown");
  empty.write("driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19\n");
  EXPECT_EQ(nvidia_accelerators(empty.path(), nullptr).driver, "535.104.05");
}

class HwRecordingExperiment : public testing::IndexedUnitsExperiment {
 public:
  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv&) override {
    return experiments::UnitOutcome::result({{"index", unit.spec["index"]}});
  }
};

TEST(HardwareFingerprint, EveryAttemptRecordCarriesThisMachinesFingerprint) {
  const testing::TempDir dir("k3lab-hw-run");
  experiments::RunRequest request;
  request.experiment_id = "memory-pool";
  request.profile = "smoke";
  request.runs_root = dir.path() / "runs";
  request.protocol_file = dir.write("experiments/memory-pool.json", testing::minimal_protocol().dump());
  request.unfrozen = true;
  request.options = {{"device", "cpu"}};
  request.experiment_factory = [] { return std::make_unique<HwRecordingExperiment>(); };
  const auto summary = experiments::run_experiment(request);
  ASSERT_EQ(summary.exit_code, 0) << summary.message;
  std::size_t attempts = 0;
  for (const auto& record : read_ledger(summary.run_dir).records) {
    if (record.value("kind", "") != "attempt") continue;
    ++attempts;
    EXPECT_EQ(record.at("hardware"), hardware_fingerprint("cpu")) << record.dump();
  }
  EXPECT_EQ(attempts, 4u);  // the smoke profile's four units
}

}  // namespace
}  // namespace k3lab::core
