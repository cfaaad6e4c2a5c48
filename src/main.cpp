// k3lab: registers the subcommands and maps errors to exit codes; nothing else.
#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "k3lab/analysis_info.hpp"
#include "k3lab/build_info.hpp"
#include "k3lab/core/allocator_policy.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/stop_signals.hpp"
#include "k3lab/core/terminal_log.hpp"
#include "k3lab/core/thread_policy.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/models/kernel_registration.hpp"

namespace {

// What `k3lab --version` prints: version, build, revision of the tree it was built from, threads, analysis.
std::string version_text() {
  const auto threads = k3lab::core::choose_thread_policy(0);
  const auto revision = k3lab::core::source_revision(k3lab::build::kSourceDir);
  const std::string revision_text =
      revision.revision == k3lab::core::SourceRevision{}.revision ? std::string("unknown (the build's source tree ") + k3lab::build::kSourceDir +
                                      " is not a git checkout)"
                                : revision.revision + (revision.dirty ? " (dirty tree)" : "") + " in " +
                                      k3lab::build::kSourceDir;
  return std::string("k3lab ") + k3lab::build::kVersion + " (" + k3lab::build::kInfo + ")\nsource revision: " +
         revision_text + "\nthreads: " + std::to_string(threads.threads) + " by default (" + threads.source +
         "; --threads sets LibTorch's and the BLAS pool, or on the CPU how many of a step's micro-batches train "
         "side by side; OMP_WAIT_POLICY for LibTorch runs and benchmarks: passive unless set)" +
         "\nanalysis: version " + k3lab::build::kAnalysisVersion + ", sources sha256 " + k3lab::build::kAnalysisSha256;
}

}  // namespace

int main(int argc, char** argv) {
  // A stop during start-up waits for the handlers below instead of killing a half-started process.
  k3lab::core::hold_stop_signals();
  // Idle OpenMP workers must sleep, not spin, before LibTorch starts its pool (core/thread_policy.hpp):
  // the commands that compute with it run again with OMP_WAIT_POLICY=PASSIVE unless the user set it.
  if (k3lab::cli::computes_with_libtorch(argc, argv)) {
    if (const auto why = k3lab::core::restart_with_passive_openmp(argv)) {
      std::cerr << "k3lab: warning: " << *why << "; idle OpenMP workers will spin (set OMP_WAIT_POLICY=passive)\n";
    }
  }
  // Freed prompt and response buffers go back to the system: a long run's memory stays flat.
  k3lab::core::apply_allocator_policy();
  // Log lines above any progress bar, coloured only on a terminal without NO_COLOR.
  spdlog::set_default_logger(k3lab::core::make_terminal_logger());
  spdlog::cfg::load_env_levels();
  spdlog::set_pattern("[%H:%M:%S] [%^%l%$] %v");
  // CUDA tensors in the models then run the k3lab kernels; a no-op without a CUDA LibTorch build.
  k3lab::models::register_cuda_kernels();
  if (k3lab::cli::handles_stop_signals(argc, argv)) k3lab::experiments::install_stop_handlers();
  k3lab::core::release_stop_signals();
  CLI::App app{"k3lab: frozen, repeatable experiments on Kimi K3's ideas.\n" +
               std::string(k3lab::cli::kExitCodeHelp)};
  // Computed only when asked for: it reads the source tree's revision with git.
  app.set_version_flag("--version", std::function<std::string()>(version_text));
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
  k3lab::cli::register_data(app, ctx);
  k3lab::cli::register_help(app, ctx);
  k3lab::cli::add_examples(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code == 0) return 0;
    const std::string suggestion = k3lab::cli::usage_suggestion(app, ctx.argv);
    if (!suggestion.empty()) std::cerr << suggestion << "\n";
    return k3lab::experiments::kExitUsage;
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
