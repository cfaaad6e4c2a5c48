// Family 4, order-sensitive state: ledger events for one account whose final balance depends on the
// order in which they appear (multiplication does not commute with deposits and withdrawals),
// interleaved with events for other accounts (which may also reset their balance).
#include <set>
#include <sstream>

#include "detail/family_content.hpp"
#include "detail/prose_generator.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate::detail {
namespace {

enum class Op { open, deposit, withdraw, multiply, reset };

struct LedgerEvent {
  Op op;
  long long value;
};

long long apply(long long balance, const LedgerEvent& event) {
  switch (event.op) {
    case Op::open:
    case Op::reset: return event.value;
    case Op::deposit: return balance + event.value;
    case Op::withdraw: return balance - event.value;
    case Op::multiply: return balance * event.value;
  }
  return balance;
}

std::string event_text(const std::string& account, const LedgerEvent& event) {
  const std::string v = std::to_string(event.value);
  switch (event.op) {
    case Op::open: return "Ledger event: account " + account + " was opened with a balance of " + v + " credits.";
    case Op::deposit: return "Ledger event: " + v + " credits were deposited into account " + account + ".";
    case Op::withdraw: return "Ledger event: " + v + " credits were withdrawn from account " + account + ".";
    case Op::multiply: return "Ledger event: the balance of account " + account + " was multiplied by " + v + ".";
    case Op::reset: return "Ledger event: the balance of account " + account + " was reset to " + v + " credits.";
  }
  return {};
}

std::string event_summary(const LedgerEvent& event) {
  const std::string v = std::to_string(event.value);
  switch (event.op) {
    case Op::open: return "opened with " + v;
    case Op::deposit: return "deposit of " + v;
    case Op::withdraw: return "withdrawal of " + v;
    case Op::multiply: return "multiplied by " + v;
    case Op::reset: return "reset to " + v;
  }
  return {};
}

LedgerEvent draw_op(core::Rng& rng, bool allow_reset) {
  const std::uint64_t kind = rng.below(allow_reset ? 4 : 3);
  if (kind == 0) return {Op::deposit, 10 + static_cast<long long>(rng.below(86))};
  if (kind == 1) return {Op::withdraw, 5 + static_cast<long long>(rng.below(56))};
  if (kind == 2) return {Op::multiply, 2 + static_cast<long long>(rng.below(2))};
  return {Op::reset, 40 + static_cast<long long>(rng.below(261))};
}

long long run(const std::vector<LedgerEvent>& events) {
  long long balance = 0;
  for (const auto& event : events) balance = apply(balance, event);
  return balance;
}

// Events 1..n-1 in reverse order, after the opening event.
long long run_later_reversed(const std::vector<LedgerEvent>& events) {
  std::vector<LedgerEvent> reordered{events.front()};
  reordered.insert(reordered.end(), events.rbegin(), events.rend() - 1);
  return run(reordered);
}

// The result without event `skip`.
long long run_without(const std::vector<LedgerEvent>& events, std::size_t skip) {
  std::vector<LedgerEvent> rest;
  for (std::size_t k = 0; k < events.size(); ++k) {
    if (k != skip) rest.push_back(events[k]);
  }
  return run(rest);
}

// Target sequence: open + 4 operations (deposits, withdrawals, at least one multiplication; no reset,
// which would make the earlier events irrelevant), never negative in document order, such that
// dropping any single event changes the result (every event is required evidence) and reversing the
// four operations changes it too (the order matters).
std::vector<LedgerEvent> draw_target_events(core::Rng& rng) {
  for (;;) {
    std::vector<LedgerEvent> events{{Op::open, 50 + static_cast<long long>(rng.below(151))}};
    int multiplies = 0;
    bool valid = true;
    long long balance = events.front().value;
    for (int i = 0; i < 4; ++i) {
      LedgerEvent event = draw_op(rng, false);
      if (event.op == Op::multiply) ++multiplies;
      balance = apply(balance, event);
      if (balance < 0) valid = false;
      events.push_back(event);
    }
    const long long result = run(events);
    for (std::size_t k = 0; k < events.size() && valid; ++k) valid = run_without(events, k) != result;
    if (valid && multiplies >= 1 && result != run_later_reversed(events)) return events;
  }
}

std::vector<LedgerEvent> draw_other_events(core::Rng& rng) {
  for (;;) {
    std::vector<LedgerEvent> events{{Op::open, 30 + static_cast<long long>(rng.below(171))}};
    for (int i = 0; i < 2; ++i) events.push_back(draw_op(rng, true));
    long long balance = 0;
    bool valid = true;
    for (const auto& event : events) {
      balance = apply(balance, event);
      if (balance < 0) valid = false;
    }
    if (valid) return events;
  }
}

}  // namespace

FamilyContent build_order_state(core::Rng& rng, int index) {
  std::set<std::string> used;
  auto account_name = [&] {
    for (;;) {
      std::string name = invent_name(rng, 2, 3).text();
      if (used.insert(name).second) return name;
    }
  };
  const std::string target = account_name();
  const std::string other1 = account_name();
  const std::string other2 = account_name();
  const std::vector<LedgerEvent> events = draw_target_events(rng);
  const std::vector<LedgerEvent> events1 = draw_other_events(rng);
  const std::vector<LedgerEvent> events2 = draw_other_events(rng);

  FamilyContent content;
  const std::vector<double> depths = required_depths(FixtureFamily::order_state, index, 5);
  std::ostringstream derivation;
  derivation << "Applying the ledger events for account " << target << " in document order: ";
  long long balance = 0;
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t k = 0; k < events.size(); ++k) {
    content.evidence.push_back({event_text(target, events[k]), true, depths[k],
                                "event " + std::to_string(k + 1) + " of " + std::to_string(events.size())});
    balance = apply(balance, events[k]);
    derivation << (k > 0 ? "; " : "") << evidence_ref(k) << " " << event_summary(events[k]) << " -> " << balance;
    steps.push_back({{"event", event_summary(events[k])}, {"balance", balance}});
  }
  const long long reversed = run_later_reversed(events);
  derivation << ". The final balance is " << balance << ". Applying the four later events in reverse order would give "
             << reversed << ", so the order matters. Events for accounts " << other1 << " and " << other2
             << " do not affect account " << target << ".";

  const std::vector<double> other_depths = distractor_depths(FixtureFamily::order_state, 6);
  for (std::size_t k = 0; k < 3; ++k) {
    content.evidence.push_back({event_text(other1, events1[k]), false, other_depths[2 * k], "other account event"});
    content.evidence.push_back({event_text(other2, events2[k]), false, other_depths[2 * k + 1], "other account event"});
  }
  content.question = "Apply the ledger events for account " + target +
                     " in the order in which they appear in the document. What is the final balance of account " +
                     target + ", in credits? Give the number only.";
  content.expected_answer = std::to_string(balance);
  content.derivation = derivation.str();
  content.details = {{"account", target},
                     {"steps", steps},
                     {"answer_if_later_events_reversed", reversed},
                     {"other_accounts", {other1, other2}}};
  return content;
}

}  // namespace k3lab::validate::detail
