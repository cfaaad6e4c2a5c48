#include "cli/endpoint_preflight.hpp"

#include <memory>

#include "cli/common.hpp"
#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/transport_options.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/agent_world.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::cli {

api::PreflightReport preflight_endpoint(const std::string& experiment_id, const api::EndpointChoice& choice,
                                        const nlohmann::json& options, const std::string& profile) {
  const auto loaded = load(experiment_id);
  const auto parameters = loaded.protocol.parameters_for(profile);
  api::PreflightOptions probe;
  probe.model = api::request_model(options, parameters.value("model", std::string()));
  probe.reasoning_effort = parameters.value("reasoning_effort", std::string());
  probe.need_cache_hit = experiment_id == "context-probe";
  probe.need_tool_call = experiment_id == "agent-replay";
  if (probe.need_tool_call) {
    // What a run sends: the world's tools, the system prompt and the first frozen task, answered by a
    // fresh world (its state is thrown away with the probe).
    probe.probe_tools = validate::world_tool_schemas();
    probe.probe_messages = nlohmann::json::array(
        {{{"role", "system"}, {"content", validate::agent_system_prompt()}},
         {{"role", "user"}, {"content", validate::agent_tasks().front().instruction}}});
    auto world = std::make_shared<validate::World>();
    probe.answer_tool = [world](const api::ToolCall& call) {
      return world->call_with_arguments_text(call.name, call.arguments).content();
    };
  }
  const auto pricing = parameters.value("pricing", nlohmann::json::object());
  if (pricing.is_object()) probe.price_table_as_of = pricing.value("as_of", std::string());
  probe.price_table_file = loaded.protocol.path.string();
  api::ClientConfig config;
  config.base_url = choice.base_url;
  config.stop = &experiments::stop_flag();
  api::apply_transport_options(parameters, options, config);
  return api::run_preflight(api::ChatClient(config), probe);
}

}  // namespace k3lab::cli
