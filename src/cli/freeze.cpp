#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/experiments/registry.hpp"

namespace k3lab::cli {

void register_freeze(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("freeze", "Record a protocol's canonical hash and source revision before execution");
  struct Options {
    std::vector<std::string> ids;
    bool all = false;
    std::string runs = "runs";
    bool force = false;
    bool analysis = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("experiments", opt->ids, "Experiment ids");
  cmd->add_flag("--all", opt->all, "Freeze all eight protocols");
  cmd->add_option("--runs", opt->runs,
                  "Runs root checked for results of the frozen design (the --out of `run`; same default)")
      ->capture_default_str();
  cmd->add_flag("--force", opt->force,
                "Re-freeze even though results of the frozen design exist (recorded as forced in the freeze record)");
  cmd->add_flag("--analysis", opt->analysis,
                "Record this build's analysis (report and decision code: version and sources' sha256) in the existing "
                "freeze record; the protocol's own freeze is untouched. Pages then say whether they were rendered by "
                "the frozen analysis");
  cmd->callback([opt, &ctx] {
    if (opt->all) opt->ids = experiments::registry().ids;
    if (opt->ids.empty()) throw std::invalid_argument("freeze: name an experiment id, or pass --all");
    for (const auto& id : opt->ids) {
      auto loaded = load(id);
      if (opt->analysis) {
        const auto record = core::freeze_analysis(loaded.protocol);
        std::cout << id << ": analysis " << record.analysis_version << " (sources sha256 "
                  << record.analysis_sha256.substr(0, 16) << ") frozen with protocol sha256 "
                  << record.protocol_sha256.substr(0, 16) << " -> " << core::freeze_record_path(loaded.protocol).string()
                  << "\n";
        continue;
      }
      const auto previous = core::read_freeze_record(loaded.protocol);
      const std::string hash = loaded.protocol.hash();
      if (previous && previous->protocol_sha256 == hash) {
        std::cout << id << ": already frozen (sha256 " << hash.substr(0, 16) << ")\n";
        continue;
      }
      const auto blocking = core::runs_blocking_refreeze(loaded.protocol, opt->runs);
      if (!blocking.empty() && !opt->force) {
        std::cerr << id << ": refusing to re-freeze an edited protocol: results of the frozen design exist in "
                  << blocking.front().string()
                  << (blocking.size() > 1 ? " (and " + std::to_string(blocking.size() - 1) + " more run dirs)" : "")
                  << ". Restore the frozen protocol (git diff shows the edit), or pass --force to freeze a new design "
                     "(the old results keep their own hash, and the new freeze record says it was forced)\n";
        ctx.exit_code = experiments::kExitProtocol;
        return;
      }
      core::FreezeOptions options;
      if (!blocking.empty()) {
        options.forced = true;
        options.forced_note = "frozen with --force while results of the previous design " +
                              (previous ? previous->protocol_sha256.substr(0, 16) : std::string("(no record)")) +
                              " existed in:";
        for (const auto& run : blocking) options.forced_note += " " + run.string();
      }
      const auto record = core::freeze(loaded.protocol, options);
      std::cout << id << ": frozen sha256 " << record.protocol_sha256.substr(0, 16) << " at rev "
                << record.source_revision.substr(0, 12) << (record.source_dirty ? " (dirty tree)" : "") << " -> "
                << core::freeze_record_path(loaded.protocol).string() << "\n";
      if (record.forced) std::cout << id << ": " << record.forced_note << "\n";
    }
  });
}

}  // namespace k3lab::cli
