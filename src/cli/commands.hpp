#pragma once
// One file per subcommand; each registers itself on the app and reports its exit code in Context.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace k3lab::cli {

struct Context {
  std::vector<std::string> argv;
  int exit_code = 0;
};

void register_list(CLI::App& app, Context& ctx);
void register_plan(CLI::App& app, Context& ctx);
void register_validate(CLI::App& app, Context& ctx);
void register_freeze(CLI::App& app, Context& ctx);
void register_run(CLI::App& app, Context& ctx);
void register_report(CLI::App& app, Context& ctx);
void register_status(CLI::App& app, Context& ctx);
void register_bench(CLI::App& app, Context& ctx);
void register_mock_server(CLI::App& app, Context& ctx);
void register_check_endpoint(CLI::App& app, Context& ctx);
void register_fixture(CLI::App& app, Context& ctx);
void register_data(CLI::App& app, Context& ctx);
void register_help(CLI::App& app, Context& ctx);

// Adds "Examples:" to the end of every command's --help (usage_help.cpp).
void add_examples(CLI::App& app);

// After a parse error: "unknown command ...; did you mean ..." or the closest option of the command
// used, or nothing when no suggestion is plausible.
std::string usage_suggestion(const CLI::App& app, const std::vector<std::string>& argv);

// Whether this command line trains or benchmarks with LibTorch's thread pools (openmp_restart.cpp).
bool computes_with_libtorch(int argc, char** argv);

// Whether this command line stops cleanly on SIGINT/SIGTERM (run, mock-server, check-endpoint), so that
// main installs the stop handlers before it lets a stop through (stop_commands.cpp).
bool handles_stop_signals(int argc, char** argv);

// The exit codes, as printed in `k3lab --help`.
extern const char* const kExitCodeHelp;

}  // namespace k3lab::cli
