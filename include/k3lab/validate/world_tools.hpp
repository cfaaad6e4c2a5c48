#pragma once
// The agent-replay world's tools as OpenAI tool declarations ({"type":"function","function":{...}}).
// Read tools: get_account, find_account, list_orders, get_order, get_inventory.
// Mutating tools (optional "idempotency_key" argument): transfer_funds, place_order, cancel_order,
// restock. Amounts are integer cents. The declaration order is fixed (the "reorder a dynamic tool
// declaration" fault permutes it on purpose).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::validate {

inline constexpr std::string_view kIdempotencyKeyField = "idempotency_key";

nlohmann::json world_tool_schemas();
std::vector<std::string> world_tool_names();
bool is_world_tool(std::string_view name);
bool is_mutating_tool(std::string_view name);

}  // namespace k3lab::validate
