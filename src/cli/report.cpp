#include <iostream>

#include "cli/commands.hpp"
#include "k3lab/experiments/registry.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {

void register_report(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("report", "Regenerate every table and chart from the raw ledgers and manifests only");
  auto runs = std::make_shared<std::string>("runs");
  auto out = std::make_shared<std::string>("report");
  cmd->add_option("--runs", *runs, "Runs root to read")->capture_default_str();
  cmd->add_option("--out", *out, "Report folder to write (index.html, one folder per experiment and profile)")
      ->capture_default_str();
  cmd->callback([runs, out, &ctx] {
    if (!std::filesystem::is_directory(*runs)) {
      const std::string out_option = *runs == experiments::RunRequest{}.runs_root.string() ? "" : " --out " + *runs;
      throw std::runtime_error("no runs under " + *runs + ": run an experiment first (`k3lab run --all --profile smoke" +
                               out_option + "`) or point --runs at a runs folder");
    }
    const auto outcome = experiments::build_reports(*runs, *out, experiments::registry());
    for (const auto& e : outcome.entries) {
      std::cout << e.experiment_id << " (" << e.profile << "): " << e.status << " -> " << *out << "/" << e.page_dir
                << "/index.html\n";
    }
    std::cout << "index: " << *out << "/index.html\n";
    for (const auto& damaged : outcome.damaged) {
      std::cerr << "report: " << damaged.run_dir.string() << " could not be rendered: " << damaged.error << "\n";
    }
    if (!outcome.damaged.empty()) {
      std::cerr << "report: " << outcome.damaged.size() << " run dir(s) could not be rendered (listed above and on the "
                << "index); every other run was rendered\n";
    }
    for (const auto& bad : outcome.ledger_errors) {
      std::cerr << "report: " << bad.run_dir.string() << ": " << bad.error << "\n";
    }
    ctx.exit_code = outcome.damaged.empty() && outcome.ledger_errors.empty() ? experiments::kExitOk
                                                                             : experiments::kExitError;
  });
}

}  // namespace k3lab::cli
