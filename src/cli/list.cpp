#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "k3lab/experiments/registry.hpp"

namespace k3lab::cli {

const char* const kExitCodeHelp =
    "Exit codes: 0 ok; 1 runtime error; 2 bad command line (or a checkpoint of another world size);\n"
    "3 protocol invalid, unfrozen or changed; 4 a window rule stopped the run;\n"
    "130 interrupted (run again to resume).";

void register_list(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("list", "The eight experiments: evidence class, runner status, freeze status");
  auto json = std::make_shared<bool>(false);
  auto format = std::make_shared<std::string>("text");
  cmd->add_flag("--json", *json, "Print JSON (same as -o json)");
  cmd->add_option("-o,--output", *format, "Output format")->check(CLI::IsMember({"text", "md", "csv", "json"}))->capture_default_str();
  cmd->callback([json, format, &ctx] {
    report::Table table;
    table.id = "experiments";
    table.columns = {"seed_number", "id", "evidence_class", "protocol", "title"};  // the seed numbers them 1..8
    int index = 0;
    for (const auto& id : experiments::registry().ids) {
      ++index;
      std::string frozen = "?", title = "?", evidence = "?";
      try {
        auto loaded = load(id);
        frozen = freeze_label(core::check_freeze(loaded.protocol));
        title = loaded.protocol.title;
        evidence = loaded.protocol.evidence_class;
      } catch (const std::exception& e) {
        frozen = std::string("INVALID: ") + e.what();
        frozen = frozen.substr(0, frozen.find('\n'));
      }
      table.rows.push_back({index, id, evidence, frozen, title});
    }
    print_table(table, *json ? "json" : *format, std::cout);
    ctx.exit_code = 0;
  });
}

}  // namespace k3lab::cli
