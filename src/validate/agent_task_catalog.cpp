// The frozen agent-replay tasks and their hidden references. Expected values were computed by hand
// from initial_world_state() and are checked independently by the tests.
#include <map>
#include <stdexcept>

#include "detail/text.hpp"
#include "k3lab/validate/agent_task_reference.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/answer_normalize.hpp"

namespace k3lab::validate {
namespace {

using nlohmann::json;

struct Entry {
  AgentTask task;
  TaskReference reference;
};

ReferenceMutation transfer(const char* from, const char* to, std::int64_t cents) {
  return {"transfer_funds", {{"from_account_id", from}, {"to_account_id", to}, {"amount_cents", cents}}};
}
ReferenceMutation place(const char* account, const char* sku, std::int64_t quantity) {
  return {"place_order", {{"account_id", account}, {"sku", sku}, {"quantity", quantity}}};
}
ReferenceMutation cancel(const char* order) { return {"cancel_order", {{"order_id", order}}}; }
ReferenceMutation restock(const char* sku, std::int64_t quantity) {
  return {"restock", {{"sku", sku}, {"quantity", quantity}}};
}

const std::vector<Entry>& catalog() {
  static const std::vector<Entry> entries = {
      {{"T01", "What is the current balance of account ACC-101?", {"read"}}, {{}, ResultKind::number, "1250.00", 1}},
      {{"T02", "How many units of SKU-KETTLE are in stock?", {"read"}}, {{}, ResultKind::number, "3", 1}},
      {{"T03", "Which of the accounts ACC-102 and ACC-104 holds more money? Answer with the account id.",
        {"read", "parallel"}},
       {{}, ResultKind::exact, "ACC-102", 2}},
      {{"T04", "What is the combined stock of SKU-LAMP and SKU-FAN?", {"read", "parallel"}},
       {{}, ResultKind::number, "17", 2}},
      {{"T05", "Transfer 25.00 from ACC-101 to ACC-102.", {"mutation"}},
       {{transfer("ACC-101", "ACC-102", 2500)}, ResultKind::exact, "DONE", 1}},
      {{"T06", "Restock SKU-CHAIR with 6 units.", {"mutation"}},
       {{restock("SKU-CHAIR", 6)}, ResultKind::exact, "DONE", 1}},
      {{"T07", "Place an order for 2 units of SKU-MUG for account ACC-105 and tell me the new order id.",
        {"mutation"}},
       {{place("ACC-105", "SKU-MUG", 2)}, ResultKind::exact, "ORD-5006", 1}},
      {{"T08", "Cancel order ORD-5002.", {"mutation"}}, {{cancel("ORD-5002")}, ResultKind::exact, "DONE", 1}},
      {{"T09", "How many placed orders does account ACC-101 have?", {"read"}}, {{}, ResultKind::number, "2", 1}},
      {{"T10", "Find the account of Chloe Okafor and tell me its balance.", {"read", "multi-turn"}},
       {{}, ResultKind::number, "5020.10", 2}},
      {{"T11",
        "Check the stock of SKU-KETTLE and SKU-LAMP, then place an order for 1 unit of whichever has more stock for "
        "account ACC-103.",
        {"read", "parallel", "mutation", "multi-turn"}},
       {{place("ACC-103", "SKU-LAMP", 1)}, ResultKind::exact, "SKU-LAMP", 3}},
      {{"T12", "Transfer 40.00 from ACC-106 to ACC-104, then report the new balance of ACC-104.",
        {"mutation", "read", "multi-turn"}},
       {{transfer("ACC-106", "ACC-104", 4000)}, ResultKind::number, "128.40", 2}},
      {{"T13",
        "If ACC-104 has at least 100.00, transfer 100.00 from ACC-104 to ACC-101; otherwise transfer 50.00 from "
        "ACC-103 to ACC-104.",
        {"read", "mutation", "multi-turn"}},
       {{transfer("ACC-103", "ACC-104", 5000)}, ResultKind::exact, "DONE", 2}},
      {{"T14", "Cancel every placed order of account ACC-101 and tell me how many orders you cancelled.",
        {"read", "mutation", "parallel", "multi-turn"}},
       {{cancel("ORD-5001"), cancel("ORD-5002")}, ResultKind::number, "2", 3}},
      {{"T15", "Place an order for 1 unit of SKU-CHAIR for account ACC-102.", {"mutation", "refusal"}},
       {{place("ACC-102", "SKU-CHAIR", 1)}, ResultKind::failed, "", 1}},
      {{"T16", "Transfer 500.00 from ACC-104 to ACC-105.", {"mutation", "refusal"}},
       {{transfer("ACC-104", "ACC-105", 50000)}, ResultKind::failed, "", 1}},
      {{"T17", "Restock SKU-KETTLE with 4 units and SKU-FAN with 2 units.", {"mutation", "parallel"}},
       {{restock("SKU-KETTLE", 4), restock("SKU-FAN", 2)}, ResultKind::exact, "DONE", 2}},
      {{"T18", "What is the total value of order ORD-5004?", {"read"}}, {{}, ResultKind::number, "90.00", 1}},
      {{"T19", "Who has the larger balance, Bruno Tanaka or Esme Varga? Answer with the full name.",
        {"read", "parallel", "multi-turn"}},
       {{}, ResultKind::exact, "Esme Varga", 4}},
      {{"T20", "Move the full balance of ACC-102 to ACC-106.", {"read", "mutation", "multi-turn"}},
       {{transfer("ACC-102", "ACC-106", 31075)}, ResultKind::exact, "DONE", 2}},
      {{"T21", "Place an order for 3 units of SKU-NOTEBOOK for Dmitri Larsen and tell me the new order id.",
        {"read", "mutation", "multi-turn"}},
       {{place("ACC-104", "SKU-NOTEBOOK", 3)}, ResultKind::exact, "ORD-5006", 2}},
      {{"T22",
        "Cancel order ORD-5004 and then place a new order for 1 unit of SKU-KETTLE for the same account and tell me "
        "the new order id.",
        {"mutation", "multi-turn"}},
       {{cancel("ORD-5004"), place("ACC-103", "SKU-KETTLE", 1)}, ResultKind::exact, "ORD-5006", 2}},
      {{"T23",
        "Restock SKU-CHAIR with 2 units, then place an order for 2 units of SKU-CHAIR for account ACC-103 and tell me "
        "the new order id.",
        {"mutation", "multi-turn"}},
       {{restock("SKU-CHAIR", 2), place("ACC-103", "SKU-CHAIR", 2)}, ResultKind::exact, "ORD-5006", 2}},
      {{"T24", "Does account ACC-104 have enough money to pay for 4 units of SKU-FAN? Answer YES or NO.",
        {"read", "parallel"}},
       {{}, ResultKind::exact, "NO", 2}},
  };
  return entries;
}

const Entry& entry(std::string_view id) {
  for (const auto& e : catalog()) {
    if (e.task.id == id) return e;
  }
  throw std::invalid_argument("unknown agent task '" + std::string(id) + "'; valid ids are T01 .. T24");
}

}  // namespace

std::string agent_system_prompt() {
  return "You are the operations assistant of a small shop. Use the tools to look up and change accounts, orders "
         "and inventory; never guess a value you can look up. Amounts in tool arguments are integer cents. Give "
         "every mutating call (transfer_funds, place_order, cancel_order, restock) an idempotency_key that is unique "
         "to that operation, and reuse a key only to retry the same operation. When you are done, reply with a short "
         "summary whose last line is \"RESULT: <value>\", where <value> is the number, id or name the task asks for "
         "(money with two decimals), DONE when the requested change succeeded, or FAILED: <reason> when it could "
         "not be made.";
}

const std::vector<AgentTask>& agent_tasks() {
  static const std::vector<AgentTask> tasks = [] {
    std::vector<AgentTask> out;
    for (const auto& e : catalog()) out.push_back(e.task);
    return out;
  }();
  return tasks;
}

const AgentTask& agent_task(std::string_view id) { return entry(id).task; }
const TaskReference& agent_task_reference(std::string_view task_id) { return entry(task_id).reference; }

WorldState expected_final_state(std::string_view task_id) {
  World world;
  for (const auto& m : agent_task_reference(task_id).mutations) world.call(m.tool, m.arguments);
  return world.state();
}

std::optional<std::string> extract_result_value(std::string_view final_answer) {
  std::optional<std::string> value;
  for (std::string_view line : detail::split_lines(final_answer)) {
    std::string_view rest = detail::skip_decoration(line);
    if (!detail::istarts_with(rest, "result")) continue;
    rest = rest.substr(6);
    std::size_t i = 0;
    while (i < rest.size() && std::string_view(" \t*_").find(rest[i]) != std::string_view::npos) ++i;
    if (i >= rest.size() || std::string_view(":=-").find(rest[i]) == std::string_view::npos) continue;
    rest = rest.substr(i + 1);
    const std::size_t first = rest.find_first_not_of(" \t*_");
    const std::size_t last = rest.find_last_not_of(" \t*_\r");
    value = first == std::string_view::npos ? std::string() : std::string(rest.substr(first, last - first + 1));
  }
  return value;
}

TaskVerdict validate_agent_task(std::string_view task_id, const World& world, std::string_view final_answer) {
  const TaskReference& reference = agent_task_reference(task_id);
  TaskVerdict verdict;
  const WorldState expected = expected_final_state(task_id);
  verdict.state_ok = world.state() == expected;
  if (!verdict.state_ok) {
    verdict.reasons.push_back("final world state differs from the reference: expected " +
                              world_state_json(expected).dump() + ", got " + world.state_json().dump());
  }
  const std::optional<std::string> value = extract_result_value(final_answer);
  if (!value) {
    verdict.reasons.push_back("the final answer has no 'RESULT:' line");
  } else {
    verdict.result_value = *value;
    switch (reference.result_kind) {
      case ResultKind::number: {
        const std::vector<std::string> numbers = number_tokens(*value);
        const auto want = parse_money_to_cents(reference.value);
        verdict.answer_ok = numbers.size() == 1 && parse_money_to_cents(numbers[0]) == want;
        break;
      }
      case ResultKind::exact: verdict.answer_ok = normalized_answer_match(reference.value, *value); break;
      case ResultKind::failed: verdict.answer_ok = normalize_answer(*value).rfind("failed", 0) == 0; break;
    }
    if (!verdict.answer_ok) {
      verdict.reasons.push_back("RESULT '" + *value + "' does not match the expected " +
                                (reference.result_kind == ResultKind::failed ? std::string("FAILED: <reason>")
                                                                             : reference.value));
    }
  }
  verdict.passed = verdict.state_ok && verdict.answer_ok;
  return verdict;
}

nlohmann::json task_verdict_json(const TaskVerdict& verdict) {
  return {{"passed", verdict.passed},
          {"state_ok", verdict.state_ok},
          {"answer_ok", verdict.answer_ok},
          {"result_value", verdict.result_value},
          {"reasons", verdict.reasons}};
}

}  // namespace k3lab::validate
