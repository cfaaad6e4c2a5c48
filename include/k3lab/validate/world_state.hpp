#pragma once
// The agent-replay world of experiment 2: accounts, orders and inventory. Money is integer cents.
// initial_world_state() is frozen: changing it changes every task's expected outcome.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::validate {

struct Account {
  std::string id;     // "ACC-101"
  std::string owner;  // "Alice Moreno"
  std::int64_t balance_cents = 0;
  friend bool operator==(const Account&, const Account&) = default;
};

struct InventoryItem {
  std::string sku;   // "SKU-LAMP"
  std::string name;  // "desk lamp"
  std::int64_t price_cents = 0;
  std::int64_t stock = 0;
  friend bool operator==(const InventoryItem&, const InventoryItem&) = default;
};

struct Order {
  std::string id;  // "ORD-5001"
  std::string account_id;
  std::string sku;
  std::int64_t quantity = 0;
  std::int64_t total_cents = 0;
  std::string status;  // "placed" or "cancelled"
  friend bool operator==(const Order&, const Order&) = default;
};

struct WorldState {
  std::vector<Account> accounts;
  std::vector<InventoryItem> inventory;
  std::vector<Order> orders;
  std::int64_t next_order_number = 0;
  friend bool operator==(const WorldState&, const WorldState&) = default;
};

WorldState initial_world_state();
// {"accounts":[...],"inventory":[...],"orders":[...],"next_order_number":N}, in stored order.
nlohmann::json world_state_json(const WorldState& state);

// "1250.00", "-3.05".
std::string format_cents(std::int64_t cents);
// "25", "25.5", "25.00", "$1,250.00", "1250 USD" -> cents; nullopt for anything else or more than
// two decimals.
std::optional<std::int64_t> parse_money_to_cents(std::string_view text);

}  // namespace k3lab::validate
