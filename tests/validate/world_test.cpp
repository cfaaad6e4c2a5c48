#include "k3lab/validate/agent_world.hpp"

#include <gtest/gtest.h>

#include "k3lab/validate/world_tools.hpp"

namespace k3lab::validate {
namespace {

using nlohmann::json;

const Account& account(const World& world, const std::string& id) {
  for (const auto& a : world.state().accounts) {
    if (a.id == id) return a;
  }
  throw std::runtime_error("no account " + id);
}
const InventoryItem& item(const World& world, const std::string& sku) {
  for (const auto& i : world.state().inventory) {
    if (i.sku == sku) return i;
  }
  throw std::runtime_error("no item " + sku);
}
std::string error_type(const ToolOutcome& outcome) {
  return outcome.result.contains("error") ? outcome.result["error"]["type"].get<std::string>() : std::string();
}

TEST(WorldState, MoneyFormattingAndParsing) {
  EXPECT_EQ(format_cents(125000), "1250.00");
  EXPECT_EQ(format_cents(5), "0.05");
  EXPECT_EQ(format_cents(-305), "-3.05");
  EXPECT_EQ(parse_money_to_cents("25"), 2500);
  EXPECT_EQ(parse_money_to_cents("25.5"), 2550);
  EXPECT_EQ(parse_money_to_cents("$1,250.00"), 125000);
  EXPECT_EQ(parse_money_to_cents("1250 USD"), 125000);
  EXPECT_EQ(parse_money_to_cents("-3.05"), -305);
  EXPECT_FALSE(parse_money_to_cents("1.005"));
  EXPECT_FALSE(parse_money_to_cents("ten"));
  EXPECT_FALSE(parse_money_to_cents(""));
}

TEST(World, ReadToolsReturnTheInitialFacts) {
  World world;
  ToolOutcome r = world.call("get_account", {{"account_id", "ACC-101"}});
  EXPECT_EQ(r.result, json({{"account_id", "ACC-101"}, {"owner", "Alice Moreno"}, {"balance_cents", 125000}, {"balance", "1250.00"}}));
  EXPECT_FALSE(r.mutating);
  EXPECT_FALSE(r.executed);
  r = world.call("find_account", {{"owner_name", "  chloe okafor "}});
  EXPECT_EQ(r.result.at("account_id"), "ACC-103");
  r = world.call("list_orders", {{"account_id", "ACC-101"}, {"status", "placed"}});
  EXPECT_EQ(r.result.at("orders").size(), 2u);
  r = world.call("list_orders", {{"account_id", "ACC-102"}});
  ASSERT_EQ(r.result.at("orders").size(), 1u);
  EXPECT_EQ(r.result.at("orders")[0].at("status"), "cancelled");
  r = world.call("get_order", {{"order_id", "ORD-5004"}});
  EXPECT_EQ(r.result.at("total"), "90.00");
  r = world.call("get_inventory", {{"sku", "SKU-FAN"}});
  EXPECT_EQ(r.result.at("stock"), 5);
  EXPECT_EQ(r.result.at("price"), "59.90");
  EXPECT_TRUE(world.mutation_log().entries().empty());
}

TEST(World, RejectsBadCallsWithoutExecuting) {
  World world;
  EXPECT_EQ(error_type(world.call("delete_everything", json::object())), "unknown_tool");
  EXPECT_EQ(error_type(world.call("get_account", json::object())), "invalid_arguments");
  EXPECT_EQ(error_type(world.call("get_account", {{"account_id", 101}})), "invalid_arguments");
  EXPECT_EQ(error_type(world.call("get_account", {{"account_id", "ACC-101"}, {"extra", 1}})), "invalid_arguments");
  EXPECT_EQ(error_type(world.call("list_orders", {{"account_id", "ACC-101"}, {"status", "open"}})), "invalid_arguments");
  EXPECT_EQ(error_type(world.call("get_account", {{"account_id", "ACC-999"}})), "not_found");
  EXPECT_EQ(error_type(world.call("transfer_funds", {{"from_account_id", "ACC-101"}, {"to_account_id", "ACC-102"},
                                                     {"amount_cents", 0}})),
            "invalid_arguments");
  EXPECT_EQ(error_type(world.call("transfer_funds", {{"from_account_id", "ACC-101"}, {"to_account_id", "ACC-101"},
                                                     {"amount_cents", 5}})),
            "invalid_arguments");
  EXPECT_EQ(error_type(world.call("transfer_funds", {{"from_account_id", "ACC-101"}, {"to_account_id", "ACC-102"},
                                                     {"amount_cents", 2.5}})),
            "invalid_arguments");
  EXPECT_EQ(error_type(world.call("restock", {{"sku", "SKU-LAMP"}, {"quantity", 1},
                                              {"idempotency_key", std::string(256, 'k')}})),
            "invalid_arguments");
  EXPECT_EQ(error_type(world.call_with_arguments_text("get_account", "{not json")), "invalid_arguments");
  EXPECT_EQ(error_type(world.call_with_arguments_text("get_account", "")), "invalid_arguments");
  EXPECT_TRUE(world.mutation_log().entries().empty());
  EXPECT_EQ(world.state(), initial_world_state());
}

TEST(World, MutationsChangeStateAsSpecified) {
  World world;
  ToolOutcome t = world.call("transfer_funds", {{"from_account_id", "ACC-101"}, {"to_account_id", "ACC-102"}, {"amount_cents", 2500}});
  EXPECT_TRUE(t.executed);
  EXPECT_EQ(t.result.at("from_balance"), "1225.00");
  EXPECT_EQ(account(world, "ACC-101").balance_cents, 122500);
  EXPECT_EQ(account(world, "ACC-102").balance_cents, 33575);

  ToolOutcome o = world.call("place_order", {{"account_id", "ACC-105"}, {"sku", "SKU-MUG"}, {"quantity", 2}});
  EXPECT_EQ(o.result.at("order_id"), "ORD-5006");
  EXPECT_EQ(o.result.at("total"), "16.50");
  EXPECT_EQ(account(world, "ACC-105").balance_cents, 74200 - 1650);
  EXPECT_EQ(item(world, "SKU-MUG").stock, 38);

  ToolOutcome c = world.call("cancel_order", {{"order_id", "ORD-5006"}});
  EXPECT_EQ(c.result.at("refunded"), "16.50");
  EXPECT_EQ(c.result.at("account_id"), "ACC-105");
  EXPECT_EQ(account(world, "ACC-105").balance_cents, 74200);
  EXPECT_EQ(item(world, "SKU-MUG").stock, 40);

  ToolOutcome again = world.call("cancel_order", {{"order_id", "ORD-5006"}});
  EXPECT_EQ(error_type(again), "already_cancelled");
  EXPECT_TRUE(again.executed);  // it ran, and failed a business rule

  EXPECT_EQ(error_type(world.call("place_order", {{"account_id", "ACC-102"}, {"sku", "SKU-CHAIR"}, {"quantity", 1}})),
            "out_of_stock");
  EXPECT_EQ(error_type(world.call("transfer_funds", {{"from_account_id", "ACC-104"}, {"to_account_id", "ACC-105"},
                                                     {"amount_cents", 50000}})),
            "insufficient_funds");
  EXPECT_EQ(world.call("restock", {{"sku", "SKU-CHAIR"}, {"quantity", 6}}).result.at("stock"), 6);

  ASSERT_EQ(world.mutation_log().size(), 7u);
  EXPECT_EQ(world.mutation_log().entries()[3].error_type, "already_cancelled");
  EXPECT_FALSE(world.mutation_log().entries()[3].succeeded);
  EXPECT_EQ(world.mutation_log().entries()[6].seq, 7u);
  EXPECT_EQ(world.duplicate_mutations(), 1u);  // the second cancel of ORD-5006
}

TEST(World, IdempotencyKeysFollowStripeSemantics) {
  World world;
  const json transfer = {{"from_account_id", "ACC-101"}, {"to_account_id", "ACC-102"}, {"amount_cents", 1000},
                         {"idempotency_key", "k-1"}};
  const ToolOutcome first = world.call("transfer_funds", transfer);
  const ToolOutcome second = world.call("transfer_funds", transfer);
  EXPECT_TRUE(first.executed);
  EXPECT_FALSE(second.executed);
  EXPECT_TRUE(second.replayed);
  EXPECT_EQ(first.content(), second.content());
  EXPECT_EQ(account(world, "ACC-101").balance_cents, 124000);  // moved once
  EXPECT_EQ(world.mutation_log().size(), 1u);

  // Same key, different arguments or tool: rejected, not executed.
  json changed = transfer;
  changed["amount_cents"] = 2000;
  const ToolOutcome reuse = world.call("transfer_funds", changed);
  EXPECT_EQ(error_type(reuse), "idempotency_key_reuse");
  EXPECT_FALSE(reuse.executed);
  EXPECT_EQ(error_type(world.call("restock", {{"sku", "SKU-LAMP"}, {"quantity", 1}, {"idempotency_key", "k-1"}})),
            "idempotency_key_reuse");
  EXPECT_EQ(account(world, "ACC-101").balance_cents, 124000);

  // A request rejected by validation is not stored: the key can be used once the request is fixed.
  EXPECT_EQ(error_type(world.call("transfer_funds", {{"from_account_id", "ACC-999"}, {"to_account_id", "ACC-102"},
                                                     {"amount_cents", 100}, {"idempotency_key", "k-2"}})),
            "not_found");
  EXPECT_TRUE(world.call("transfer_funds", {{"from_account_id", "ACC-103"}, {"to_account_id", "ACC-102"},
                                            {"amount_cents", 100}, {"idempotency_key", "k-2"}})
                  .executed);

  // A business-rule failure is stored and replayed even after the state would allow it.
  const json overdraw = {{"from_account_id", "ACC-104"}, {"to_account_id", "ACC-105"}, {"amount_cents", 10000},
                         {"idempotency_key", "k-3"}};
  EXPECT_EQ(error_type(world.call("transfer_funds", overdraw)), "insufficient_funds");
  world.call("transfer_funds", {{"from_account_id", "ACC-103"}, {"to_account_id", "ACC-104"}, {"amount_cents", 50000}});
  const ToolOutcome replayed = world.call("transfer_funds", overdraw);
  EXPECT_EQ(error_type(replayed), "insufficient_funds");
  EXPECT_TRUE(replayed.replayed);
  EXPECT_EQ(world.idempotency_store().size(), 3u);
  EXPECT_EQ(world.duplicate_mutations(), 0u);

  // Without a key, a retry executes again: a duplicate mutation.
  const json no_key = {{"sku", "SKU-FAN"}, {"quantity", 2}};
  world.call("restock", no_key);
  world.call("restock", no_key);
  EXPECT_EQ(item(world, "SKU-FAN").stock, 9);
  EXPECT_EQ(world.duplicate_mutations(), 1u);
}

TEST(World, ResetRestoresTheInitialStateExactly) {
  World world;
  const json initial_json = world.state_json();
  std::vector<std::string> first_run;
  auto script = [&](World& w) {
    std::vector<std::string> results;
    results.push_back(w.call("transfer_funds", {{"from_account_id", "ACC-106"}, {"to_account_id", "ACC-104"},
                                                {"amount_cents", 4000}, {"idempotency_key", "a"}})
                          .content());
    results.push_back(w.call("place_order", {{"account_id", "ACC-103"}, {"sku", "SKU-KETTLE"}, {"quantity", 1}}).content());
    results.push_back(w.call("cancel_order", {{"order_id", "ORD-5001"}}).content());
    results.push_back(w.call("restock", {{"sku", "SKU-CHAIR"}, {"quantity", 3}, {"idempotency_key", "b"}}).content());
    return results;
  };
  first_run = script(world);
  EXPECT_NE(world.state(), initial_world_state());
  world.reset();
  EXPECT_EQ(world.state(), initial_world_state());
  EXPECT_EQ(world.state_json(), initial_json);
  EXPECT_EQ(world.mutation_log().size(), 0u);
  EXPECT_EQ(world.idempotency_store().size(), 0u);
  // Keys were forgotten and the order counter restarted: the same script gives the same bytes.
  EXPECT_EQ(script(world), first_run);
}

TEST(WorldTools, SchemasAreOpenAiFunctionDeclarations) {
  const json tools = world_tool_schemas();
  ASSERT_EQ(tools.size(), 9u);
  int mutating = 0;
  for (const auto& t : tools) {
    EXPECT_EQ(t.at("type"), "function");
    const json& f = t.at("function");
    const json& p = f.at("parameters");
    EXPECT_EQ(p.at("type"), "object");
    EXPECT_EQ(p.at("additionalProperties"), false);
    for (const auto& r : p.at("required")) EXPECT_TRUE(p.at("properties").contains(r.get<std::string>()));
    const std::string name = f.at("name");
    EXPECT_EQ(p.at("properties").contains("idempotency_key"), is_mutating_tool(name)) << name;
    if (is_mutating_tool(name)) {
      ++mutating;
      for (const auto& r : p.at("required")) EXPECT_NE(r, "idempotency_key");
    }
  }
  EXPECT_EQ(mutating, 4);
  EXPECT_TRUE(is_world_tool("get_order"));
  EXPECT_FALSE(is_world_tool("get_orders"));
}

}  // namespace
}  // namespace k3lab::validate
