// k3lab_train_bench: the training-step benchmark (`k3lab bench train`) as a standalone binary, for
// machines that build only the LibTorch parts (the GPU machine has no libcurl or cpp-httplib; see
// scripts/gpu-check.sh). Arguments are key=value options of run_train_bench (train/bench.hpp).
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/models/kernel_registration.hpp"
#include "k3lab/train/bench.hpp"

int main(int argc, char** argv) {
  nlohmann::json options = nlohmann::json::object();
  for (int i = 1; i < argc; ++i) {
    const std::string pair = argv[i];
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "k3lab_train_bench: \"" << pair << "\" is not key=value (for example device=cuda steps=10)\n";
      return 2;
    }
    const std::string text = pair.substr(eq + 1);
    options[pair.substr(0, eq)] = nlohmann::json::accept(text) ? nlohmann::json::parse(text) : nlohmann::json(text);
  }
  // On CUDA the KDA arms then run the k3lab kernels, as `k3lab run` does.
  const bool kernels = k3lab::models::register_cuda_kernels();
  std::cout << "kernels registered for CUDA tensors: " << (kernels ? "yes" : "no (LibTorch path)") << "\n";
  return k3lab::train::run_train_bench(options, std::cout, k3lab::train::default_bench_arms());
}
