#include "k3lab/validate/agent_world.hpp"

#include <optional>

#include "detail/text.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::validate {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxIdempotencyKeyLength = 255;

json error_result(std::string_view type, const std::string& message) {
  return {{"error", {{"type", std::string(type)}, {"message", message}}}};
}

const json& schema_of(std::string_view tool) {
  static const json schemas = world_tool_schemas();
  for (const auto& t : schemas) {
    if (t["function"]["name"] == tool) return t["function"]["parameters"];
  }
  static const json none;
  return none;
}

// Checks arguments against the tool's declared JSON schema (types, required, enum, minimum, no
// unknown properties). Returns the problem, or nullopt.
std::optional<std::string> argument_problem(std::string_view tool, const json& arguments) {
  if (!arguments.is_object()) return "arguments must be a JSON object";
  const json& schema = schema_of(tool);
  const json& properties = schema["properties"];
  for (const auto& [name, value] : arguments.items()) {
    if (!properties.contains(name)) return "unknown argument '" + name + "'";
    const json& property = properties[name];
    if (property["type"] == "string") {
      if (!value.is_string()) return "argument '" + name + "' must be a string";
      if (property.contains("enum")) {
        bool allowed = false;
        for (const auto& option : property["enum"]) allowed = allowed || option == value;
        if (!allowed) return "argument '" + name + "' must be one of " + property["enum"].dump();
      }
    } else if (property["type"] == "integer") {
      if (!value.is_number_integer()) return "argument '" + name + "' must be an integer";
      if (value.get<std::int64_t>() < property["minimum"].get<std::int64_t>()) {
        return "argument '" + name + "' must be at least " + property["minimum"].dump();
      }
    }
  }
  for (const auto& required : schema["required"]) {
    if (!arguments.contains(required.get<std::string>())) return "missing required argument '" + required.get<std::string>() + "'";
  }
  if (arguments.contains(kIdempotencyKeyField)) {
    const std::string key = arguments[std::string(kIdempotencyKeyField)].get<std::string>();
    if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return "idempotency_key must have 1 to 255 characters";
  }
  return std::nullopt;
}

Account* find_account(WorldState& state, const std::string& id) {
  for (auto& a : state.accounts) {
    if (a.id == id) return &a;
  }
  return nullptr;
}
InventoryItem* find_item(WorldState& state, const std::string& sku) {
  for (auto& i : state.inventory) {
    if (i.sku == sku) return &i;
  }
  return nullptr;
}
Order* find_order(WorldState& state, const std::string& id) {
  for (auto& o : state.orders) {
    if (o.id == id) return &o;
  }
  return nullptr;
}

json order_json(const Order& o) {
  return {{"order_id", o.id},           {"account_id", o.account_id},          {"sku", o.sku},
          {"quantity", o.quantity},     {"total_cents", o.total_cents},        {"total", format_cents(o.total_cents)},
          {"status", o.status}};
}

}  // namespace

void World::reset() {
  state_ = initial_world_state();
  keys_.clear();
  log_.clear();
}

json World::execute(std::string_view tool, const json& args, Failure& failure) {
  failure = Failure::none;
  auto rejected = [&](std::string_view type, const std::string& message) {
    failure = Failure::rejected;
    return error_result(type, message);
  };
  auto business = [&](std::string_view type, const std::string& message) {
    failure = Failure::business;
    return error_result(type, message);
  };
  auto text = [&](const char* name) { return args[name].get<std::string>(); };

  if (tool == "get_account") {
    const Account* a = find_account(state_, text("account_id"));
    if (!a) return rejected("not_found", "no account " + text("account_id"));
    return {{"account_id", a->id}, {"owner", a->owner}, {"balance_cents", a->balance_cents},
            {"balance", format_cents(a->balance_cents)}};
  }
  if (tool == "find_account") {
    const std::string wanted(detail::trim(text("owner_name")));
    for (const auto& a : state_.accounts) {
      if (detail::iequals(a.owner, wanted)) return {{"account_id", a.id}, {"owner", a.owner}};
    }
    return rejected("not_found", "no account owned by '" + wanted + "'");
  }
  if (tool == "list_orders") {
    const Account* a = find_account(state_, text("account_id"));
    if (!a) return rejected("not_found", "no account " + text("account_id"));
    const std::string status = args.value("status", std::string("any"));
    json orders = json::array();
    for (const auto& o : state_.orders) {
      if (o.account_id == a->id && (status == "any" || o.status == status)) orders.push_back(order_json(o));
    }
    return {{"account_id", a->id}, {"status", status}, {"orders", orders}};
  }
  if (tool == "get_order") {
    const Order* o = find_order(state_, text("order_id"));
    if (!o) return rejected("not_found", "no order " + text("order_id"));
    return order_json(*o);
  }
  if (tool == "get_inventory") {
    const InventoryItem* i = find_item(state_, text("sku"));
    if (!i) return rejected("not_found", "no inventory item " + text("sku"));
    return {{"sku", i->sku}, {"name", i->name}, {"price_cents", i->price_cents}, {"price", format_cents(i->price_cents)},
            {"stock", i->stock}};
  }
  if (tool == "transfer_funds") {
    Account* from = find_account(state_, text("from_account_id"));
    Account* to = find_account(state_, text("to_account_id"));
    if (!from) return rejected("not_found", "no account " + text("from_account_id"));
    if (!to) return rejected("not_found", "no account " + text("to_account_id"));
    if (from == to) return rejected("invalid_arguments", "from_account_id and to_account_id must differ");
    const std::int64_t amount = args["amount_cents"].get<std::int64_t>();
    if (from->balance_cents < amount) {
      return business("insufficient_funds", from->id + " has " + format_cents(from->balance_cents) + ", needs " +
                                                format_cents(amount));
    }
    from->balance_cents -= amount;
    to->balance_cents += amount;
    return {{"status", "completed"},           {"from_account_id", from->id},
            {"to_account_id", to->id},         {"amount_cents", amount},
            {"amount", format_cents(amount)},  {"from_balance", format_cents(from->balance_cents)},
            {"to_balance", format_cents(to->balance_cents)}};
  }
  if (tool == "place_order") {
    Account* a = find_account(state_, text("account_id"));
    InventoryItem* i = find_item(state_, text("sku"));
    if (!a) return rejected("not_found", "no account " + text("account_id"));
    if (!i) return rejected("not_found", "no inventory item " + text("sku"));
    const std::int64_t quantity = args["quantity"].get<std::int64_t>();
    const std::int64_t total = quantity * i->price_cents;
    if (i->stock < quantity) {
      return business("out_of_stock", i->sku + " has " + std::to_string(i->stock) + " units in stock, " +
                                          std::to_string(quantity) + " requested");
    }
    if (a->balance_cents < total) {
      return business("insufficient_funds", a->id + " has " + format_cents(a->balance_cents) + ", the order costs " +
                                                format_cents(total));
    }
    i->stock -= quantity;
    a->balance_cents -= total;
    Order order{"ORD-" + std::to_string(state_.next_order_number++), a->id, i->sku, quantity, total, "placed"};
    state_.orders.push_back(order);
    json result = order_json(order);
    result["remaining_balance"] = format_cents(a->balance_cents);
    return result;
  }
  if (tool == "cancel_order") {
    Order* o = find_order(state_, text("order_id"));
    if (!o) return rejected("not_found", "no order " + text("order_id"));
    if (o->status == "cancelled") return business("already_cancelled", o->id + " is already cancelled");
    Account* a = find_account(state_, o->account_id);
    InventoryItem* i = find_item(state_, o->sku);
    a->balance_cents += o->total_cents;
    i->stock += o->quantity;
    o->status = "cancelled";
    return {{"status", "cancelled"},
            {"order_id", o->id},
            {"account_id", o->account_id},
            {"refunded_cents", o->total_cents},
            {"refunded", format_cents(o->total_cents)}};
  }
  if (tool == "restock") {
    InventoryItem* i = find_item(state_, text("sku"));
    if (!i) return rejected("not_found", "no inventory item " + text("sku"));
    i->stock += args["quantity"].get<std::int64_t>();
    return {{"status", "restocked"}, {"sku", i->sku}, {"stock", i->stock}};
  }
  return rejected("unknown_tool", "no tool " + std::string(tool));
}

ToolOutcome World::call(std::string_view tool, const json& arguments) {
  ToolOutcome outcome;
  outcome.mutating = is_mutating_tool(tool);
  if (!is_world_tool(tool)) {
    std::string names;
    for (const auto& name : world_tool_names()) names += (names.empty() ? "" : ", ") + name;
    outcome.result = error_result("unknown_tool", "no tool named '" + std::string(tool) + "'; available: " + names);
    outcome.is_error = true;
    return outcome;
  }
  if (auto problem = argument_problem(tool, arguments)) {
    outcome.result = error_result("invalid_arguments", std::string(tool) + ": " + *problem);
    outcome.is_error = true;
    return outcome;
  }
  std::string key;
  std::string canonical;
  if (outcome.mutating) {
    json without_key = arguments;
    if (arguments.contains(kIdempotencyKeyField)) {
      key = arguments[std::string(kIdempotencyKeyField)].get<std::string>();
      without_key.erase(std::string(kIdempotencyKeyField));
    }
    canonical = without_key.dump();  // nlohmann objects keep keys sorted: canonical
    if (!key.empty()) {
      const IdempotencyStore::Lookup hit = keys_.lookup(key, tool, canonical);
      if (hit.match == IdempotencyStore::Match::replay) {
        outcome.result = hit.stored->result;
        outcome.is_error = outcome.result.contains("error");
        outcome.replayed = true;
        return outcome;
      }
      if (hit.match == IdempotencyStore::Match::mismatch) {
        outcome.result = error_result("idempotency_key_reuse",
                                      "idempotency_key '" + key + "' was first used for " + hit.stored->tool +
                                          hit.stored->canonical_arguments +
                                          "; use a new key for a different operation");
        outcome.is_error = true;
        return outcome;
      }
    }
  }
  Failure failure = Failure::none;
  outcome.result = execute(tool, arguments, failure);
  outcome.is_error = failure != Failure::none;
  if (outcome.mutating && failure != Failure::rejected) {
    outcome.executed = true;
    const std::string error_type =
        failure == Failure::business ? outcome.result["error"]["type"].get<std::string>() : std::string();
    log_.append({0, std::string(tool), canonical, key, failure == Failure::none, error_type});
    if (!key.empty()) keys_.store(key, {std::string(tool), canonical, outcome.result});
  }
  return outcome;
}

ToolOutcome World::call_with_arguments_text(std::string_view tool, std::string_view arguments_json) {
  json arguments;
  if (detail::trim(arguments_json).empty()) {
    arguments = json::object();
  } else {
    try {
      arguments = json::parse(arguments_json);
    } catch (const json::exception& e) {
      ToolOutcome outcome;
      outcome.mutating = is_mutating_tool(tool);
      outcome.is_error = true;
      outcome.result = error_result("invalid_arguments", std::string(tool) + ": arguments are not valid JSON (" +
                                                             e.what() + ")");
      return outcome;
    }
  }
  return call(tool, arguments);
}

}  // namespace k3lab::validate
