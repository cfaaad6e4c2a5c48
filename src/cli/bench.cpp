#include <iostream>

#include "cli/commands.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {

void register_bench(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks that print their numbers (recorded in docs/benchmarks.md)");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "Benchmark name")->required();
  cmd->callback([name, &ctx] {
    std::cerr << "bench " << *name << ": not built yet\n";
    ctx.exit_code = experiments::kExitNotBuilt;
  });
}

}  // namespace k3lab::cli
