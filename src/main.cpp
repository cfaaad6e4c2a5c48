// k3lab: registers the subcommands and maps errors to exit codes; nothing else.
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "k3lab/build_info.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/models/kernel_registration.hpp"

int main(int argc, char** argv) {
  spdlog::cfg::load_env_levels();
  spdlog::set_pattern("[%H:%M:%S] [%^%l%$] %v");
  // CUDA tensors in the models then run the k3lab kernels; a no-op without a CUDA LibTorch build.
  k3lab::models::register_cuda_kernels();
  CLI::App app{"k3lab: frozen, repeatable experiments on Kimi K3's ideas.\n" +
               std::string(k3lab::cli::kExitCodeHelp)};
  app.set_version_flag("--version", std::string("k3lab ") + k3lab::build::kVersion + " (" + k3lab::build::kInfo + ")");
  app.require_subcommand(1, 1);
  k3lab::cli::Context ctx;
  ctx.argv.assign(argv, argv + argc);
  k3lab::cli::register_list(app, ctx);
  k3lab::cli::register_plan(app, ctx);
  k3lab::cli::register_validate(app, ctx);
  k3lab::cli::register_freeze(app, ctx);
  k3lab::cli::register_run(app, ctx);
  k3lab::cli::register_report(app, ctx);
  k3lab::cli::register_status(app, ctx);
  k3lab::cli::register_bench(app, ctx);
  k3lab::cli::register_mock_server(app, ctx);
  k3lab::cli::register_check_endpoint(app, ctx);
  k3lab::cli::register_fixture(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : k3lab::experiments::kExitUsage;
  } catch (const k3lab::core::ProtocolError& e) {
    std::cerr << "k3lab: invalid protocol: " << e.what() << "\n";
    return k3lab::experiments::kExitProtocol;
  } catch (const std::invalid_argument& e) {
    std::cerr << "k3lab: " << e.what() << "\n";
    return k3lab::experiments::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "k3lab: error: " << e.what() << "\n";
    return k3lab::experiments::kExitError;
  }
  return ctx.exit_code;
}
