#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {

void register_freeze(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("freeze", "Record a protocol's canonical hash and source revision before execution");
  struct Options {
    std::vector<std::string> ids;
    bool all = false;
    std::string runs = "runs";
    bool force = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("experiments", opt->ids, "Experiment ids");
  cmd->add_flag("--all", opt->all, "Freeze all eight protocols");
  cmd->add_option("--runs", opt->runs, "Runs root checked for results of an older design")->capture_default_str();
  cmd->add_flag("--force", opt->force, "Re-freeze even though results of the previous design exist");
  cmd->callback([opt, &ctx] {
    if (opt->all) opt->ids = core::experiment_ids();
    if (opt->ids.empty()) throw std::invalid_argument("freeze: name an experiment id, or pass --all");
    for (const auto& id : opt->ids) {
      auto loaded = load(id);
      const auto previous = core::read_freeze_record(loaded.protocol);
      const std::string hash = loaded.protocol.hash();
      if (previous && previous->protocol_sha256 == hash) {
        std::cout << id << ": already frozen (sha256 " << hash.substr(0, 16) << ")\n";
        continue;
      }
      if (previous && !opt->force) {
        for (const auto& run : core::list_run_dirs(opt->runs, id)) {
          if (run.manifest.value("protocol_sha256", "") == previous->protocol_sha256 &&
              !core::finished_units(core::read_ledger(run.path)).empty()) {
            std::cerr << id << ": refusing to re-freeze: " << run.path.string()
                      << " holds results of the frozen design. Keep the frozen protocol, or pass --force to "
                         "start a new design (the old results stay with their own hash)\n";
            ctx.exit_code = experiments::kExitProtocol;
            return;
          }
        }
      }
      const auto record = core::freeze(loaded.protocol);
      std::cout << id << ": frozen sha256 " << record.protocol_sha256.substr(0, 16) << " at rev "
                << record.source_revision.substr(0, 12) << (record.source_dirty ? " (dirty tree)" : "") << " -> "
                << core::freeze_record_path(loaded.protocol).string() << "\n";
    }
  });
}

}  // namespace k3lab::cli
