#include "k3lab/validate/scripted_agent.hpp"

#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

#include "detail/text.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/world_state.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::validate {
namespace {

using json = nlohmann::json;

std::string call_key(const std::string& tool, const json& arguments) { return tool + " " + arguments.dump(); }

struct Call {
  std::string tool;
  json arguments;
};

// What the conversation after the instruction tells the agent.
struct Transcript {
  std::string instruction;
  std::map<std::string, json> results;  // call_key -> tool result
  std::size_t tool_calls_so_far = 0;    // in the whole conversation, for call ids
};

struct Decision {
  bool final = false;
  std::string summary;
  std::string result;
};

bool is_error(const json* result) { return result && result->is_object() && result->contains("error"); }

class Planner {
 public:
  Planner(const Transcript& transcript, std::set<std::string> tools) : transcript_(transcript), tools_(std::move(tools)) {}

  // The result of a read, or nullptr after queueing the call for this turn.
  const json* read(const std::string& tool, json arguments) { return request(tool, std::move(arguments)); }

  // The result of a mutation, or nullptr after queueing it with its deterministic idempotency key.
  const json* mutate(const std::string& tool, json arguments) {
    const std::string digest =
        core::sha256_hex(transcript_.instruction + "\n" + tool + "\n" + arguments.dump()).substr(0, 16);
    arguments[std::string(kIdempotencyKeyField)] = "k3-" + digest;
    return request(tool, std::move(arguments));
  }

  Decision wait() const { return {}; }
  // What a plan returns while it cannot go on: wait while any result is missing, else fail on the
  // first error. nullopt when every result is there and no error.
  std::optional<Decision> stop_unless_ready(const std::vector<const json*>& results) const {
    for (const json* r : results) {
      if (!r) return wait();
    }
    for (const json* r : results) {
      if (is_error(r)) return fail(*r);
    }
    return std::nullopt;
  }
  Decision done(std::string summary, std::string result) const { return {true, std::move(summary), std::move(result)}; }
  Decision fail(const json& result) const {
    const std::string message = result.contains("error") ? result["error"].value("message", std::string("error"))
                                                         : std::string("unexpected tool result");
    return {true, "The request could not be completed: " + message + ".", "FAILED: " + message};
  }

  const std::vector<Call>& pending() const { return pending_; }
  const std::vector<std::string>& notes() const { return notes_; }
  const std::optional<std::string>& missing_tool() const { return missing_tool_; }

 private:
  const json* request(const std::string& tool, json arguments) {
    if (tools_.count(tool) == 0) {
      if (!missing_tool_) missing_tool_ = tool;
      return nullptr;
    }
    const std::string key = call_key(tool, arguments);
    const auto it = transcript_.results.find(key);
    if (it != transcript_.results.end()) {
      json shown = arguments;
      shown.erase(std::string(kIdempotencyKeyField));
      notes_.push_back(tool + shown.dump() + " -> " + it->second.dump());
      return &it->second;
    }
    for (const auto& call : pending_) {
      if (call_key(call.tool, call.arguments) == key) return nullptr;
    }
    pending_.push_back({tool, std::move(arguments)});
    return nullptr;
  }

  const Transcript& transcript_;
  std::set<std::string> tools_;
  std::vector<Call> pending_;
  std::vector<std::string> notes_;
  std::optional<std::string> missing_tool_;
};

std::int64_t cents(const std::string& amount) {
  const auto value = parse_money_to_cents(amount);
  if (!value) throw std::logic_error("scripted agent: unparsable amount " + amount);
  return *value;
}

std::int64_t integer(const std::string& text) { return std::stoll(text); }

std::int64_t field(const json& result, const char* name) {
  return result.contains(name) && result[name].is_number_integer() ? result[name].get<std::int64_t>() : 0;
}

std::string text_field(const json& result, const char* name) {
  return result.contains(name) && result[name].is_string() ? result[name].get<std::string>() : std::string();
}

using Match = std::smatch;
using Plan = std::function<Decision(Planner&, const Match&)>;

struct Intent {
  std::string name;
  std::regex pattern;
  Plan plan;
};

// The regex fragments the instruction templates are written with.
struct IntentPatterns {
  std::string acc = "(ACC-\\d+)";
  std::string sku = "(SKU-[A-Z]+)";
  std::string ord = "(ORD-\\d+)";
  std::string amt = "(\\d+(?:\\.\\d{1,2})?)";
  std::string num = "(\\d+)";
  std::string name = "([A-Z][a-z]+(?: [A-Z][a-z]+)+)";
  std::string units = " units?";
};

// Intents in match order; each pattern is anchored to the whole instruction.
class IntentList {
 public:
  void add(std::string intent_name, const std::string& pattern, Plan plan) {
    intents_.push_back({std::move(intent_name), std::regex("^" + pattern + "$"), std::move(plan)});
  }
  std::vector<Intent> take() { return std::move(intents_); }

 private:
  std::vector<Intent> intents_;
};

// Single and paired reads: balances and stock.
void add_lookup_intents(IntentList& intents, const IntentPatterns& pattern) {
  intents.add("account balance", "What is the current balance of account " + pattern.acc + "\\?",
              [](Planner& p, const Match& m) {
                const json* r = p.read("get_account", {{"account_id", m[1].str()}});
                if (auto stop = p.stop_unless_ready({r})) return *stop;
                return p.done("The balance of " + m[1].str() + " is " + text_field(*r, "balance") + ".",
                              text_field(*r, "balance"));
              });
  intents.add("item stock", "How many units of " + pattern.sku + " are in stock\\?", [](Planner& p, const Match& m) {
    const json* r = p.read("get_inventory", {{"sku", m[1].str()}});
    if (auto stop = p.stop_unless_ready({r})) return *stop;
    const std::string stock = std::to_string(field(*r, "stock"));
    return p.done(m[1].str() + " has " + stock + " units in stock.", stock);
  });
  intents.add("compare two balances",
              "Which of the accounts " + pattern.acc + " and " + pattern.acc +
                  " holds more money\\? Answer with the account id\\.",
              [](Planner& p, const Match& m) {
                const json* a = p.read("get_account", {{"account_id", m[1].str()}});
                const json* b = p.read("get_account", {{"account_id", m[2].str()}});
                if (auto stop = p.stop_unless_ready({a, b})) return *stop;
                const bool first = field(*a, "balance_cents") >= field(*b, "balance_cents");
                const std::string winner = first ? m[1].str() : m[2].str();
                return p.done(m[1].str() + " has " + text_field(*a, "balance") + " and " + m[2].str() + " has " +
                                  text_field(*b, "balance") + "; " + winner + " holds more.",
                              winner);
              });
  intents.add("combined stock", "What is the combined stock of " + pattern.sku + " and " + pattern.sku + "\\?",
              [](Planner& p, const Match& m) {
                const json* a = p.read("get_inventory", {{"sku", m[1].str()}});
                const json* b = p.read("get_inventory", {{"sku", m[2].str()}});
                if (auto stop = p.stop_unless_ready({a, b})) return *stop;
                const std::string total = std::to_string(field(*a, "stock") + field(*b, "stock"));
                return p.done(m[1].str() + " and " + m[2].str() + " have " + total + " units together.", total);
              });
}

// Transfers and restocks, the compound phrasings before the plain ones they contain.
void add_transfer_and_restock_intents(IntentList& intents, const IntentPatterns& pattern) {
  intents.add(
      "transfer and report",
      "Transfer " + pattern.amt + " from " + pattern.acc + " to " + pattern.acc + ", then report the new balance of " +
          pattern.acc + "\\.",
      [](Planner& p, const Match& m) {
        const json* t = p.mutate(
            "transfer_funds",
            {{"from_account_id", m[2].str()}, {"to_account_id", m[3].str()}, {"amount_cents", cents(m[1].str())}});
        if (auto stop = p.stop_unless_ready({t})) return *stop;
        const json* r = p.read("get_account", {{"account_id", m[4].str()}});
        if (auto stop = p.stop_unless_ready({r})) return *stop;
        return p.done("Transferred " + m[1].str() + "; " + m[4].str() + " now has " + text_field(*r, "balance") + ".",
                      text_field(*r, "balance"));
      });
  intents.add("transfer", "Transfer " + pattern.amt + " from " + pattern.acc + " to " + pattern.acc + "\\.",
              [](Planner& p, const Match& m) {
                const json* t = p.mutate("transfer_funds", {{"from_account_id", m[2].str()},
                                                            {"to_account_id", m[3].str()},
                                                            {"amount_cents", cents(m[1].str())}});
                if (auto stop = p.stop_unless_ready({t})) return *stop;
                return p.done("Transferred " + m[1].str() + " from " + m[2].str() + " to " + m[3].str() + ".", "DONE");
              });
  intents.add("restock two items",
              "Restock " + pattern.sku + " with " + pattern.num + pattern.units + " and " + pattern.sku + " with " +
                  pattern.num + pattern.units + "\\.",
              [](Planner& p, const Match& m) {
                const json* a = p.mutate("restock", {{"sku", m[1].str()}, {"quantity", integer(m[2].str())}});
                const json* b = p.mutate("restock", {{"sku", m[3].str()}, {"quantity", integer(m[4].str())}});
                if (auto stop = p.stop_unless_ready({a, b})) return *stop;
                return p.done("Restocked " + m[1].str() + " and " + m[3].str() + ".", "DONE");
              });
  intents.add(
      "restock then order",
      "Restock " + pattern.sku + " with " + pattern.num + pattern.units + ", then place an order for " + pattern.num +
          pattern.units + " of " + pattern.sku + " for account " + pattern.acc + " and tell me the new order id\\.",
      [](Planner& p, const Match& m) {
        const json* r = p.mutate("restock", {{"sku", m[1].str()}, {"quantity", integer(m[2].str())}});
        if (auto stop = p.stop_unless_ready({r})) return *stop;
        const json* o = p.mutate("place_order",
                                 {{"account_id", m[5].str()}, {"sku", m[4].str()}, {"quantity", integer(m[3].str())}});
        if (auto stop = p.stop_unless_ready({o})) return *stop;
        return p.done("Restocked " + m[1].str() + " and placed " + text_field(*o, "order_id") + ".",
                      text_field(*o, "order_id"));
      });
  intents.add("restock", "Restock " + pattern.sku + " with " + pattern.num + pattern.units + "\\.",
              [](Planner& p, const Match& m) {
                const json* r = p.mutate("restock", {{"sku", m[1].str()}, {"quantity", integer(m[2].str())}});
                if (auto stop = p.stop_unless_ready({r})) return *stop;
                return p.done(
                    "Restocked " + m[1].str() + "; it now has " + std::to_string(field(*r, "stock")) + " units.",
                    "DONE");
              });
}

// Orders placed, cancelled and counted, and lookups by owner name.
void add_order_intents(IntentList& intents, const IntentPatterns& pattern) {
  intents.add("place order",
              "Place an order for " + pattern.num + pattern.units + " of " + pattern.sku + " for (?:account " +
                  pattern.acc + "|" + pattern.name + ")( and tell me the new order id)?\\.",
              [](Planner& p, const Match& m) {
                std::string account = m[3].str();
                if (account.empty()) {
                  const json* f = p.read("find_account", {{"owner_name", m[4].str()}});
                  if (auto stop = p.stop_unless_ready({f})) return *stop;
                  account = text_field(*f, "account_id");
                }
                const json* o = p.mutate(
                    "place_order", {{"account_id", account}, {"sku", m[2].str()}, {"quantity", integer(m[1].str())}});
                if (auto stop = p.stop_unless_ready({o})) return *stop;
                const std::string id = text_field(*o, "order_id");
                return p.done("Placed " + id + " for " + account + " (total " + text_field(*o, "total") + ").",
                              m[5].matched ? id : std::string("DONE"));
              });
  intents.add(
      "cancel and reorder",
      "Cancel order " + pattern.ord + " and then place a new order for " + pattern.num + pattern.units + " of " +
          pattern.sku + " for the same account and tell me the new order id\\.",
      [](Planner& p, const Match& m) {
        const json* c = p.mutate("cancel_order", {{"order_id", m[1].str()}});
        if (auto stop = p.stop_unless_ready({c})) return *stop;
        const std::string account = text_field(*c, "account_id");
        const json* o =
            p.mutate("place_order", {{"account_id", account}, {"sku", m[3].str()}, {"quantity", integer(m[2].str())}});
        if (auto stop = p.stop_unless_ready({o})) return *stop;
        return p.done("Cancelled " + m[1].str() + " and placed " + text_field(*o, "order_id") + " for " + account + ".",
                      text_field(*o, "order_id"));
      });
  intents.add("cancel order", "Cancel order " + pattern.ord + "\\.", [](Planner& p, const Match& m) {
    const json* c = p.mutate("cancel_order", {{"order_id", m[1].str()}});
    if (auto stop = p.stop_unless_ready({c})) return *stop;
    return p.done("Cancelled " + m[1].str() + " and refunded " + text_field(*c, "refunded") + ".", "DONE");
  });
  intents.add("count placed orders", "How many placed orders does account " + pattern.acc + " have\\?",
              [](Planner& p, const Match& m) {
                const json* l = p.read("list_orders", {{"account_id", m[1].str()}, {"status", "placed"}});
                if (auto stop = p.stop_unless_ready({l})) return *stop;
                const std::string count = std::to_string(l->value("orders", json::array()).size());
                return p.done(m[1].str() + " has " + count + " placed orders.", count);
              });
  intents.add("balance by owner", "Find the account of " + pattern.name + " and tell me its balance\\.",
              [](Planner& p, const Match& m) {
                const json* f = p.read("find_account", {{"owner_name", m[1].str()}});
                if (auto stop = p.stop_unless_ready({f})) return *stop;
                const json* r = p.read("get_account", {{"account_id", text_field(*f, "account_id")}});
                if (auto stop = p.stop_unless_ready({r})) return *stop;
                return p.done(
                    m[1].str() + " owns " + text_field(*r, "account_id") + " with " + text_field(*r, "balance") + ".",
                    text_field(*r, "balance"));
              });
}

// Requests whose later steps depend on what an earlier read returned.
void add_conditional_intents(IntentList& intents, const IntentPatterns& pattern) {
  intents.add("order the better-stocked item",
              "Check the stock of " + pattern.sku + " and " + pattern.sku + ", then place an order for " + pattern.num +
                  pattern.units + " of whichever has more stock for account " + pattern.acc + "\\.",
              [](Planner& p, const Match& m) {
                const json* a = p.read("get_inventory", {{"sku", m[1].str()}});
                const json* b = p.read("get_inventory", {{"sku", m[2].str()}});
                if (auto stop = p.stop_unless_ready({a, b})) return *stop;
                const std::string chosen = field(*a, "stock") >= field(*b, "stock") ? m[1].str() : m[2].str();
                const json* o = p.mutate(
                    "place_order", {{"account_id", m[4].str()}, {"sku", chosen}, {"quantity", integer(m[3].str())}});
                if (auto stop = p.stop_unless_ready({o})) return *stop;
                return p.done("Ordered " + chosen + " (" + text_field(*o, "order_id") + ").", chosen);
              });
  intents.add("conditional transfer",
              "If " + pattern.acc + " has at least " + pattern.amt + ", transfer " + pattern.amt + " from " +
                  pattern.acc + " to " + pattern.acc + "; otherwise transfer " + pattern.amt + " from " + pattern.acc +
                  " to " + pattern.acc + "\\.",
              [](Planner& p, const Match& m) {
                const json* r = p.read("get_account", {{"account_id", m[1].str()}});
                if (auto stop = p.stop_unless_ready({r})) return *stop;
                const bool enough = field(*r, "balance_cents") >= cents(m[2].str());
                const int base = enough ? 3 : 6;
                const json* t = p.mutate("transfer_funds", {{"from_account_id", m[base + 1].str()},
                                                            {"to_account_id", m[base + 2].str()},
                                                            {"amount_cents", cents(m[base].str())}});
                if (auto stop = p.stop_unless_ready({t})) return *stop;
                return p.done(m[1].str() + " has " + text_field(*r, "balance") + "; transferred " + m[base].str() +
                                  " from " + m[base + 1].str() + " to " + m[base + 2].str() + ".",
                              "DONE");
              });
  intents.add("cancel all placed orders",
              "Cancel every placed order of account " + pattern.acc + " and tell me how many orders you cancelled\\.",
              [](Planner& p, const Match& m) {
                const json* l = p.read("list_orders", {{"account_id", m[1].str()}, {"status", "placed"}});
                if (auto stop = p.stop_unless_ready({l})) return *stop;
                std::vector<const json*> cancelled;
                for (const auto& order : l->value("orders", json::array())) {
                  cancelled.push_back(p.mutate("cancel_order", {{"order_id", text_field(order, "order_id")}}));
                }
                if (auto stop = p.stop_unless_ready(cancelled)) return *stop;
                const std::string count = std::to_string(cancelled.size());
                return p.done("Cancelled " + count + " placed orders of " + m[1].str() + ".", count);
              });
}

// Order lookups, comparisons by owner, and amounts computed from read values.
void add_computed_intents(IntentList& intents, const IntentPatterns& pattern) {
  intents.add("order total", "What is the total value of order " + pattern.ord + "\\?", [](Planner& p, const Match& m) {
    const json* o = p.read("get_order", {{"order_id", m[1].str()}});
    if (auto stop = p.stop_unless_ready({o})) return *stop;
    return p.done(m[1].str() + " totals " + text_field(*o, "total") + ".", text_field(*o, "total"));
  });
  intents.add(
      "larger balance by owner",
      "Who has the larger balance, " + pattern.name + " or " + pattern.name + "\\? Answer with the full name\\.",
      [](Planner& p, const Match& m) {
        const json* f1 = p.read("find_account", {{"owner_name", m[1].str()}});
        const json* f2 = p.read("find_account", {{"owner_name", m[2].str()}});
        if (auto stop = p.stop_unless_ready({f1, f2})) return *stop;
        const json* a = p.read("get_account", {{"account_id", text_field(*f1, "account_id")}});
        const json* b = p.read("get_account", {{"account_id", text_field(*f2, "account_id")}});
        if (auto stop = p.stop_unless_ready({a, b})) return *stop;
        const json& winner = field(*a, "balance_cents") >= field(*b, "balance_cents") ? *a : *b;
        return p.done(m[1].str() + " has " + text_field(*a, "balance") + ", " + m[2].str() + " has " +
                          text_field(*b, "balance") + ".",
                      text_field(winner, "owner"));
      });
  intents.add(
      "move full balance", "Move the full balance of " + pattern.acc + " to " + pattern.acc + "\\.",
      [](Planner& p, const Match& m) {
        const json* r = p.read("get_account", {{"account_id", m[1].str()}});
        if (auto stop = p.stop_unless_ready({r})) return *stop;
        const std::int64_t amount = field(*r, "balance_cents");
        if (amount <= 0) return p.done(m[1].str() + " is empty.", "FAILED: " + m[1].str() + " has no money to move");
        const json* t =
            p.mutate("transfer_funds",
                     {{"from_account_id", m[1].str()}, {"to_account_id", m[2].str()}, {"amount_cents", amount}});
        if (auto stop = p.stop_unless_ready({t})) return *stop;
        return p.done("Moved " + format_cents(amount) + " from " + m[1].str() + " to " + m[2].str() + ".", "DONE");
      });
  intents.add("affordability",
              "Does account " + pattern.acc + " have enough money to pay for " + pattern.num + pattern.units + " of " +
                  pattern.sku + "\\? Answer YES or NO\\.",
              [](Planner& p, const Match& m) {
                const json* a = p.read("get_account", {{"account_id", m[1].str()}});
                const json* i = p.read("get_inventory", {{"sku", m[3].str()}});
                if (auto stop = p.stop_unless_ready({a, i})) return *stop;
                const std::int64_t cost = integer(m[2].str()) * field(*i, "price_cents");
                const bool enough = field(*a, "balance_cents") >= cost;
                return p.done(m[2].str() + " units cost " + format_cents(cost) + " and " + m[1].str() + " has " +
                                  text_field(*a, "balance") + ".",
                              enough ? "YES" : "NO");
              });
}

std::vector<Intent> build_intents() {
  const IntentPatterns pattern;
  IntentList intents;
  add_lookup_intents(intents, pattern);
  add_transfer_and_restock_intents(intents, pattern);
  add_order_intents(intents, pattern);
  add_conditional_intents(intents, pattern);
  add_computed_intents(intents, pattern);
  return intents.take();
}

const std::vector<Intent>& intents() {
  static const std::vector<Intent> all = build_intents();
  return all;
}

std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.value("type", "") == "text") text += part.value("text", "");
    }
  }
  return text;
}

Transcript read_transcript(const json& messages) {
  Transcript transcript;
  std::size_t last_user = messages.size();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i]["role"] == "user") last_user = i;
    if (messages[i]["role"] == "assistant" && messages[i].contains("tool_calls") && messages[i]["tool_calls"].is_array()) {
      transcript.tool_calls_so_far += messages[i]["tool_calls"].size();
    }
  }
  if (last_user == messages.size()) return transcript;
  transcript.instruction = std::string(detail::trim(content_text(messages[last_user].value("content", json()))));
  std::map<std::string, std::string> key_by_id;
  std::map<std::string, json> result_by_id;
  for (std::size_t i = last_user + 1; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (m["role"] == "assistant" && m.contains("tool_calls") && m["tool_calls"].is_array()) {
      for (const auto& call : m["tool_calls"]) {
        if (!call.is_object() || !call.contains("function")) continue;
        const json& function = call["function"];
        json arguments = function.value("arguments", json());
        if (arguments.is_string()) {
          arguments = json::parse(arguments.get<std::string>(), nullptr, false);
        }
        if (arguments.is_discarded() || !function.contains("name") || !function["name"].is_string()) continue;
        key_by_id[call.value("id", "")] = call_key(function["name"].get<std::string>(), arguments);
      }
    } else if (m["role"] == "tool") {
      const std::string text = content_text(m.value("content", json()));
      json parsed = json::parse(text, nullptr, false);
      result_by_id[m.value("tool_call_id", "")] = parsed.is_discarded() ? json(text) : parsed;
    }
  }
  for (const auto& [id, key] : key_by_id) {
    const auto it = result_by_id.find(id);
    if (it != result_by_id.end()) transcript.results[key] = it->second;
  }
  return transcript;
}

void check_inputs(const json& messages, const json& tools, const ScriptedAgentOptions& options) {
  if (!messages.is_array()) throw std::invalid_argument("scripted agent: 'messages' must be a JSON array");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object() || !messages[i].contains("role") || !messages[i]["role"].is_string()) {
      throw std::invalid_argument("scripted agent: messages[" + std::to_string(i) +
                                  "] must be an object with a string 'role'");
    }
  }
  if (!tools.is_array()) throw std::invalid_argument("scripted agent: 'tools' must be a JSON array (may be empty)");
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (!tools[i].is_object() || !tools[i].contains("function") || !tools[i]["function"].contains("name") ||
        !tools[i]["function"]["name"].is_string()) {
      throw std::invalid_argument("scripted agent: tools[" + std::to_string(i) +
                                  "] must be {\"type\":\"function\",\"function\":{\"name\":...}}");
    }
  }
  if (options.reasoning_effort != "low" && options.reasoning_effort != "high" && options.reasoning_effort != "max") {
    throw std::invalid_argument("scripted agent: reasoning_effort '" + options.reasoning_effort +
                                "' is not one of low, high, max");
  }
}

std::string describe_calls(const std::vector<Call>& calls) {
  std::string out;
  for (const auto& call : calls) {
    json shown = call.arguments;
    shown.erase(std::string(kIdempotencyKeyField));
    out += (out.empty() ? "" : ", ") + call.tool + shown.dump();
  }
  return out;
}

std::string reasoning(const std::string& intent, const Planner& planner, const std::string& next,
                      const ScriptedAgentOptions& options) {
  if (options.reasoning_effort == "low") return "Next: " + next + ".";
  std::string text = "Request: " + intent + ".";
  text += " Known: ";
  if (planner.notes().empty()) text += "nothing yet";
  for (std::size_t i = 0; i < planner.notes().size(); ++i) text += (i ? "; " : "") + planner.notes()[i];
  text += ". Next: " + next + ".";
  if (options.reasoning_effort == "max") {
    text += " Checks: calls that do not depend on each other go out together; every mutating call carries an "
            "idempotency key derived from the operation, so a retry cannot run it twice; each result is matched "
            "to its call by tool_call_id.";
  }
  return text;
}

}  // namespace

AgentTurn scripted_agent_reply(const json& messages, const json& tools, const ScriptedAgentOptions& options) {
  check_inputs(messages, tools, options);
  std::set<std::string> available;
  for (const auto& t : tools) available.insert(t["function"]["name"].get<std::string>());
  const Transcript transcript = read_transcript(messages);

  Planner planner(transcript, available);
  std::string intent_name = "unsupported request";
  Decision decision{true, "I cannot help with that request.", "FAILED: unsupported request"};
  if (transcript.instruction.empty()) {
    decision = {true, "There is no user instruction to act on.", "FAILED: no user instruction"};
  } else {
    for (const Intent& intent : intents()) {
      Match match;
      if (std::regex_match(transcript.instruction, match, intent.pattern)) {
        intent_name = intent.name;
        decision = intent.plan(planner, match);
        break;
      }
    }
  }
  if (planner.missing_tool()) {
    decision = {true, "The tool " + *planner.missing_tool() + " is not available.",
                "FAILED: the tool " + *planner.missing_tool() + " is not available"};
  }

  AgentTurn turn;
  turn.message = {{"role", "assistant"}};
  if (!decision.final && !planner.pending().empty()) {
    json calls = json::array();
    std::size_t n = transcript.tool_calls_so_far;
    for (const auto& call : planner.pending()) {
      calls.push_back({{"id", "functions." + call.tool + ":" + std::to_string(n++)},
                       {"type", "function"},
                       {"function", {{"name", call.tool}, {"arguments", call.arguments.dump()}}}});
    }
    const std::string next = (planner.pending().size() > 1 ? "call in parallel " : "call ") + describe_calls(planner.pending());
    turn.message["content"] = "";
    turn.message["reasoning_content"] = reasoning(intent_name, planner, next, options);
    turn.message["tool_calls"] = calls;
    turn.finish_reason = "tool_calls";
    return turn;
  }
  if (!decision.final) {
    decision = {true, "I could not decide on a next step.", "FAILED: no next step"};
  }
  turn.message["content"] = decision.summary + "\nRESULT: " + decision.result;
  turn.message["reasoning_content"] = reasoning(intent_name, planner, "answer with RESULT: " + decision.result, options);
  turn.finish_reason = "stop";
  return turn;
}

}  // namespace k3lab::validate
