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

// The exit codes, as printed in `k3lab --help`.
extern const char* const kExitCodeHelp;

}  // namespace k3lab::cli
