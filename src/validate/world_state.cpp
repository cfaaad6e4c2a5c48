#include "k3lab/validate/world_state.hpp"

#include "detail/text.hpp"

namespace k3lab::validate {

WorldState initial_world_state() {
  WorldState state;
  state.accounts = {{"ACC-101", "Alice Moreno", 125000},  {"ACC-102", "Bruno Tanaka", 31075},
                    {"ACC-103", "Chloe Okafor", 502010},  {"ACC-104", "Dmitri Larsen", 8840},
                    {"ACC-105", "Esme Varga", 74200},     {"ACC-106", "Farid Haddad", 199999}};
  state.inventory = {{"SKU-LAMP", "desk lamp", 3450, 12},        {"SKU-KETTLE", "electric kettle", 4500, 3},
                     {"SKU-CHAIR", "office chair", 12900, 0},    {"SKU-MUG", "ceramic mug", 825, 40},
                     {"SKU-NOTEBOOK", "paper notebook", 480, 100}, {"SKU-FAN", "desk fan", 5990, 5}};
  state.orders = {{"ORD-5001", "ACC-101", "SKU-MUG", 2, 1650, "placed"},
                  {"ORD-5002", "ACC-101", "SKU-LAMP", 1, 3450, "placed"},
                  {"ORD-5003", "ACC-102", "SKU-FAN", 1, 5990, "cancelled"},
                  {"ORD-5004", "ACC-103", "SKU-KETTLE", 2, 9000, "placed"},
                  {"ORD-5005", "ACC-104", "SKU-NOTEBOOK", 10, 4800, "placed"}};
  state.next_order_number = 5006;
  return state;
}

nlohmann::json world_state_json(const WorldState& state) {
  nlohmann::json accounts = nlohmann::json::array();
  for (const auto& a : state.accounts) {
    accounts.push_back({{"account_id", a.id}, {"owner", a.owner}, {"balance_cents", a.balance_cents}});
  }
  nlohmann::json inventory = nlohmann::json::array();
  for (const auto& i : state.inventory) {
    inventory.push_back({{"sku", i.sku}, {"name", i.name}, {"price_cents", i.price_cents}, {"stock", i.stock}});
  }
  nlohmann::json orders = nlohmann::json::array();
  for (const auto& o : state.orders) {
    orders.push_back({{"order_id", o.id},
                      {"account_id", o.account_id},
                      {"sku", o.sku},
                      {"quantity", o.quantity},
                      {"total_cents", o.total_cents},
                      {"status", o.status}});
  }
  return {{"accounts", accounts}, {"inventory", inventory}, {"orders", orders}, {"next_order_number", state.next_order_number}};
}

std::string format_cents(std::int64_t cents) {
  const bool negative = cents < 0;
  const std::uint64_t magnitude = negative ? static_cast<std::uint64_t>(-(cents + 1)) + 1 : static_cast<std::uint64_t>(cents);
  std::string fraction = std::to_string(magnitude % 100);
  if (fraction.size() < 2) fraction.insert(0, "0");
  return (negative ? "-" : "") + std::to_string(magnitude / 100) + "." + fraction;
}

std::optional<std::int64_t> parse_money_to_cents(std::string_view text) {
  text = detail::trim(text);
  if (!text.empty() && text.front() == '$') text.remove_prefix(1);
  for (std::string_view suffix : {" USD", " usd", " dollars"}) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      text.remove_suffix(suffix.size());
    }
  }
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  std::int64_t whole = 0;
  std::int64_t fraction = 0;
  int fraction_digits = -1;  // -1: no decimal point seen
  bool any_digit = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (detail::is_digit(c)) {
      any_digit = true;
      if (fraction_digits < 0) {
        if (whole > 100000000000000LL) return std::nullopt;
        whole = whole * 10 + (c - '0');
      } else {
        if (++fraction_digits > 2) return std::nullopt;
        fraction = fraction * 10 + (c - '0');
      }
    } else if (c == ',' && fraction_digits < 0 && i > 0 && i + 1 < text.size() && detail::is_digit(text[i - 1]) &&
               detail::is_digit(text[i + 1])) {
      continue;
    } else if (c == '.' && fraction_digits < 0) {
      fraction_digits = 0;
    } else {
      return std::nullopt;
    }
  }
  if (!any_digit) return std::nullopt;
  if (fraction_digits == 1) fraction *= 10;
  const std::int64_t cents = whole * 100 + fraction;
  return negative ? -cents : cents;
}

}  // namespace k3lab::validate
