// Whether a command line computes with LibTorch's OpenMP pool, so that main restarts it once with
// OMP_WAIT_POLICY=PASSIVE (core/thread_policy.hpp) — and only then: the restart loads LibTorch twice,
// about 0.75 s that the API experiments, the simulator and most benchmarks never need.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "cli/commands.hpp"
#include "k3lab/experiments/registry.hpp"

namespace k3lab::cli {

bool computes_with_libtorch(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view command = argv[1];
  if (command == "bench") {
    static const std::set<std::string_view> kTorchBenches = {"kda", "train"};
    return argc < 3 || kTorchBenches.count(argv[2]) > 0;  // no name: let `bench` explain, as before
  }
  if (command != "run") return false;
  const auto& ids = experiments::registry().ids;
  bool named_any = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--all") return true;
    if (std::find(ids.begin(), ids.end(), arg) == ids.end()) continue;
    named_any = true;
    if (experiments::make_experiment(arg)->computes_with_libtorch()) return true;
  }
  return !named_any;  // nothing recognised: keep the careful default
}

}  // namespace k3lab::cli
