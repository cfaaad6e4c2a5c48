#include "k3lab/validate/mutation_log.hpp"

#include <set>
#include <utility>

namespace k3lab::validate {

void MutationLog::append(MutationRecord record) {
  record.seq = entries_.size() + 1;
  entries_.push_back(std::move(record));
}

std::size_t count_duplicate_mutations(const MutationLog& log) {
  std::set<std::pair<std::string, std::string>> seen;
  std::size_t duplicates = 0;
  for (const auto& entry : log.entries()) {
    if (!seen.insert({entry.tool, entry.canonical_arguments}).second) ++duplicates;
  }
  return duplicates;
}

}  // namespace k3lab::validate
