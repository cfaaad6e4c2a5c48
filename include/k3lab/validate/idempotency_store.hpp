#pragma once
// Idempotency keys with Stripe semantics for the agent-replay world's mutating tools.
//
// The first execution of a key stores (tool, canonical arguments, result). A later call with the same
// key and the same tool and arguments gets the stored result back and is not executed again. A reuse
// of the key with a different tool or different arguments is rejected with an
// "idempotency_key_reuse" error and not executed. As in Stripe's API, a request that fails
// validation (bad arguments, unknown ids) is not stored, so it can be retried with the same key
// once fixed; a request that executed and failed a business rule (insufficient funds, out of stock,
// already cancelled) is stored and replays its error. Keys live until the world is reset.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace k3lab::validate {

struct StoredIdempotentResult {
  std::string tool;
  std::string canonical_arguments;  // arguments without the key, compact JSON with sorted keys
  nlohmann::json result;
};

class IdempotencyStore {
 public:
  enum class Match { miss, replay, mismatch };

  struct Lookup {
    Match match = Match::miss;
    const StoredIdempotentResult* stored = nullptr;  // set for replay and mismatch
  };

  Lookup lookup(std::string_view key, std::string_view tool, std::string_view canonical_arguments) const;
  void store(std::string key, StoredIdempotentResult entry);
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, StoredIdempotentResult, std::less<>> entries_;
};

}  // namespace k3lab::validate
