// `k3lab check-endpoint <id>`: the pre-flight of a direct-API experiment's endpoint (api/preflight.hpp),
// alone, before any window is opened; nothing is recorded. Exit 0 when every check passes, 2 otherwise.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/endpoint_preflight.hpp"
#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::cli {

void register_check_endpoint(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("check-endpoint",
                                 "Pre-flight of an API experiment's endpoint: model listed, usage reported, cache "
                                 "hits (context-probe), a tool-call round trip (agent-replay); a few short calls");
  struct Options {
    std::string id;
    std::string base_url;
    std::string served_model;
    std::string profile = "full";
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("experiment", opt->id, "context-probe or agent-replay")->required();
  cmd->add_option("--base-url", opt->base_url, "The endpoint, as for `k3lab run` (default: the same choice)");
  cmd->add_option("--served-model", opt->served_model, "The name the server serves the protocol's model under");
  cmd->add_option("--profile", opt->profile, "Whose parameters (model, reasoning effort) to probe with")
      ->check(CLI::IsMember({"full", "smoke"}))
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "Print the report as JSON");
  cmd->callback([opt, &ctx, cmd] {
    if (!api::calls_chat_endpoint(opt->id)) {
      throw std::invalid_argument("check-endpoint: " + opt->id + " calls no endpoint; use context-probe or agent-replay");
    }
    nlohmann::json options = nlohmann::json::object();
    if (cmd->count("--base-url") > 0) {
      api::check_base_url_text(opt->base_url);
      options["base_url"] = opt->base_url;
    }
    if (!opt->served_model.empty()) options["served_model"] = opt->served_model;
    const auto choice = api::choose_endpoint(options, opt->id);
    if (choice.embedded()) {
      std::cout << opt->id << ": no endpoint given, so a run would use the embedded mock (" << api::kSimulatedLabel
                << "); nothing to check\n";
      ctx.exit_code = 0;
      return;
    }
    const auto report = preflight_endpoint(opt->id, choice, options, opt->profile);
    if (opt->json) {
      std::cout << report.to_json().dump(2) << "\n";
    } else {
      std::cout << opt->id << " pre-flight of " << choice.description() << ":\n"
                << report.text()
                << (report.ok() ? "ready: a window may open\n" : "not ready: fix the failures above (docs/endpoints.md)\n");
    }
    ctx.exit_code = report.ok() ? experiments::kExitOk : experiments::kExitUsage;
  });
}

}  // namespace k3lab::cli
