#include "k3lab/validate/world_tools.hpp"

#include <array>

namespace k3lab::validate {
namespace {

using nlohmann::json;

json string_property(const char* description) { return {{"type", "string"}, {"description", description}}; }
json integer_property(const char* description, int minimum) {
  return {{"type", "integer"}, {"minimum", minimum}, {"description", description}};
}

json tool(const char* name, const char* description, json properties, json required) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", description},
            {"parameters",
             {{"type", "object"},
              {"properties", std::move(properties)},
              {"required", std::move(required)},
              {"additionalProperties", false}}}}}};
}

json idempotency_property() {
  return string_property(
      "Unique key for this operation (at most 255 characters). Retrying with the same key returns the first "
      "result without executing again; reusing it for different arguments is an error.");
}

constexpr std::array<std::string_view, 4> kMutating = {"transfer_funds", "place_order", "cancel_order", "restock"};

}  // namespace

json world_tool_schemas() {
  json tools = json::array();
  tools.push_back(tool("get_account", "Look up one account: owner and balance.",
                       {{"account_id", string_property("Account id, e.g. ACC-101.")}}, {"account_id"}));
  tools.push_back(tool("find_account", "Find the account of a person by their full name.",
                       {{"owner_name", string_property("The account owner's full name, e.g. Alice Moreno.")}},
                       {"owner_name"}));
  tools.push_back(tool("list_orders", "List the orders of an account, optionally only those with a given status.",
                       {{"account_id", string_property("Account id, e.g. ACC-101.")},
                        {"status",
                         {{"type", "string"},
                          {"enum", {"placed", "cancelled", "any"}},
                          {"description", "Which orders to list; any (the default) lists all."}}}},
                       {"account_id"}));
  tools.push_back(tool("get_order", "Look up one order: account, item, quantity, total and status.",
                       {{"order_id", string_property("Order id, e.g. ORD-5001.")}}, {"order_id"}));
  tools.push_back(tool("get_inventory", "Look up one inventory item: name, unit price and units in stock.",
                       {{"sku", string_property("Item SKU, e.g. SKU-LAMP.")}}, {"sku"}));
  tools.push_back(tool("transfer_funds", "Move money from one account to another.",
                       {{"from_account_id", string_property("Account to debit.")},
                        {"to_account_id", string_property("Account to credit.")},
                        {"amount_cents", integer_property("Amount in cents, e.g. 2500 for 25.00.", 1)},
                        {std::string(kIdempotencyKeyField), idempotency_property()}},
                       {"from_account_id", "to_account_id", "amount_cents"}));
  tools.push_back(tool("place_order", "Order units of an item for an account; the account is charged immediately.",
                       {{"account_id", string_property("Account that pays.")},
                        {"sku", string_property("Item SKU.")},
                        {"quantity", integer_property("Units to order.", 1)},
                        {std::string(kIdempotencyKeyField), idempotency_property()}},
                       {"account_id", "sku", "quantity"}));
  tools.push_back(tool("cancel_order", "Cancel a placed order: the account is refunded and the units restocked.",
                       {{"order_id", string_property("Order id.")},
                        {std::string(kIdempotencyKeyField), idempotency_property()}},
                       {"order_id"}));
  tools.push_back(tool("restock", "Add units of an item to the inventory.",
                       {{"sku", string_property("Item SKU.")},
                        {"quantity", integer_property("Units to add.", 1)},
                        {std::string(kIdempotencyKeyField), idempotency_property()}},
                       {"sku", "quantity"}));
  return tools;
}

std::vector<std::string> world_tool_names() {
  std::vector<std::string> names;
  for (const auto& t : world_tool_schemas()) names.push_back(t["function"]["name"].get<std::string>());
  return names;
}

bool is_world_tool(std::string_view name) {
  for (const auto& n : world_tool_names()) {
    if (n == name) return true;
  }
  return false;
}

bool is_mutating_tool(std::string_view name) {
  for (std::string_view m : kMutating) {
    if (m == name) return true;
  }
  return false;
}

}  // namespace k3lab::validate
