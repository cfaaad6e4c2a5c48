#include "k3lab/validate/idempotency_store.hpp"

namespace k3lab::validate {

IdempotencyStore::Lookup IdempotencyStore::lookup(std::string_view key, std::string_view tool,
                                                  std::string_view canonical_arguments) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return {};
  const StoredIdempotentResult& stored = it->second;
  const bool same = stored.tool == tool && stored.canonical_arguments == canonical_arguments;
  return {same ? Match::replay : Match::mismatch, &stored};
}

void IdempotencyStore::store(std::string key, StoredIdempotentResult entry) {
  entries_.insert_or_assign(std::move(key), std::move(entry));
}

}  // namespace k3lab::validate
