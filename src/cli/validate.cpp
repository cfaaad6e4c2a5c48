#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/experiments/registry.hpp"

namespace k3lab::cli {

void register_validate(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("validate", "Check protocol files against their schemas without running anything");
  auto files = std::make_shared<std::vector<std::string>>();
  auto schema = std::make_shared<std::string>();
  auto experiment_id = std::make_shared<std::string>();
  cmd->add_option("files", *files, "Protocol files (default: all eight under the protocol directory)");
  cmd->add_option("--experiment", *experiment_id,
                  "The experiment whose schema and rules check the files (default: each file's name, <id>.json)");
  cmd->add_option("--schema", *schema, "Print the parameter schema of this experiment id as a Markdown table");
  cmd->callback([files, schema, experiment_id, &ctx] {
    if (!schema->empty()) {
      auto experiment = experiments::make_experiment(*schema);
      std::cout << "| field | type | required | constraint | meaning |\n|---|---|---|---|---|\n"
                << core::protocol_schema().describe() << experiment->parameter_schema().describe("parameters");
      return;
    }
    std::vector<std::filesystem::path> paths;
    for (const auto& f : *files) paths.emplace_back(f);
    if (paths.empty()) {
      for (const auto& id : experiments::registry().ids) paths.push_back(core::protocol_path(id));
    }
    int bad = 0;
    for (const auto& path : paths) {
      try {
        // The same checks as `plan` and `run` (experiments::load_checked_protocol), in one pass.
        const std::string id = experiment_id->empty() ? path.stem().string() : *experiment_id;
        auto experiment = experiments::make_experiment(id);
        auto protocol = experiments::load_checked_protocol(
            *experiment, path, experiment_id->empty() ? core::FileNaming::MustMatchId : core::FileNaming::Any);
        if (protocol.id != id) {
          throw std::invalid_argument(path.string() + " declares id \"" + protocol.id + "\" but is checked as " + id +
                                      "; fix the id field or pass --experiment " + protocol.id);
        }
        std::cout << "ok      " << path.string() << " (sha256 " << protocol.hash().substr(0, 16) << ", "
                  << freeze_label(core::check_freeze(protocol)) << ")\n";
      } catch (const std::exception& e) {
        ++bad;
        std::cerr << "INVALID " << e.what() << "\n";
      }
    }
    ctx.exit_code = bad ? experiments::kExitProtocol : experiments::kExitOk;
  });
}

}  // namespace k3lab::cli
