#pragma once
// The record of every executed mutation in the agent-replay world. A replayed idempotent call and a
// call rejected by validation are not executions and are not logged. Two executions of the same
// logical operation (same tool, same arguments apart from the idempotency key) are a duplicate
// mutation: the metric the no-idempotency fault arm is designed to provoke.
#include <cstddef>
#include <string>
#include <vector>

namespace k3lab::validate {

struct MutationRecord {
  std::size_t seq = 0;  // 1-based execution order
  std::string tool;
  std::string canonical_arguments;  // without the idempotency key
  std::string idempotency_key;      // empty when the call carried none
  bool succeeded = false;           // false: a business-rule error (the attempt still executed)
  std::string error_type;           // empty on success
};

class MutationLog {
 public:
  void append(MutationRecord record);
  const std::vector<MutationRecord>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  std::vector<MutationRecord> entries_;
};

// Executions whose (tool, canonical arguments) already occurred earlier in the log.
std::size_t count_duplicate_mutations(const MutationLog& log);

}  // namespace k3lab::validate
