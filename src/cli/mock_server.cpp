#include <iostream>

#include "cli/commands.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {

void register_mock_server(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("mock-server", "Local OpenAI-compatible endpoint used by tests and dry runs");
  auto port = std::make_shared<int>(8089);
  cmd->add_option("--port", *port, "TCP port on 127.0.0.1")->capture_default_str();
  cmd->callback([&ctx] {
    std::cerr << "mock-server: not built yet\n";
    ctx.exit_code = experiments::kExitNotBuilt;
  });
}

}  // namespace k3lab::cli
