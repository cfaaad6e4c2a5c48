#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "k3lab/api/sse_bench.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/models/kda_bench.hpp"
#include "k3lab/sim/bench.hpp"
#include "k3lab/validate/fixture_bench.hpp"

namespace k3lab::cli {
namespace {

// One row per benchmark: `k3lab bench <name>` runs it; each prints its own numbers and returns an
// exit code. Add a benchmark by adding a row.
struct BenchEntry {
  std::string name;
  std::string what;
  std::function<int(std::ostream&)> run;
};

const std::vector<BenchEntry>& bench_table() {
  static const std::vector<BenchEntry> table = {
      {"fixture", "context-probe fixture generation at 32,768 and 1,048,576 tokens, every family (goal: < 100 ms at 1M)",
       [](std::ostream& out) {
         validate::run_fixture_bench(out);
         return 0;
       }},
      {"memory-pool",
       "one full 1,000,000-arrival trace under each policy; last line: arrivals simulated per second per core "
       "(goal: >= 1,000,000)",
       [](std::ostream& out) { return sim::run_memory_pool_bench(nlohmann::json::object(), out); }},
      {"kda", "chunkwise KDA (LibTorch path) against the float64 recurrence: error and tokens/s, CPU (and CUDA)",
       [](std::ostream& out) { return models::run_kda_bench(models::KdaBenchOptions{}, out); }},
      {"sse", "SSE framing and chat-chunk decoding throughput on a synthetic 64 MiB Kimi-shaped stream",
       [](std::ostream& out) {
         api::run_sse_bench(out);
         return 0;
       }},
  };
  return table;
}

std::string bench_names() {
  std::string names;
  for (const auto& b : bench_table()) names += "\n  " + b.name + ": " + b.what;
  return names;
}

}  // namespace

void register_bench(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks that print their numbers (recorded in docs/benchmarks.md):" +
                                              bench_names());
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "Benchmark name")->required();
  cmd->callback([name, &ctx] {
    for (const auto& b : bench_table()) {
      if (b.name == *name) {
        ctx.exit_code = b.run(std::cout);
        return;
      }
    }
    throw std::invalid_argument("bench: unknown benchmark \"" + *name + "\"; known:" + bench_names());
  });
}

}  // namespace k3lab::cli
