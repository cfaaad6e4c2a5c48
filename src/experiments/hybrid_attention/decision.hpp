#pragma once
// The arithmetic of hybrid-attention's predeclared decision rule, over seed means at the token budget
// and the longest probe length, torch-free so it can be checked by hand:
//   (a) the hybrid retrieves better than all-KDA;
//   (b) the hybrid's inference memory is below full attention's;
//   (c) the hybrid lies above the line joining the all-KDA and full-attention (memory, retrieval)
//       points, i.e. it moves the quality/memory frontier; undefined when those two use equal memory.
//   Supported when (a), (b) and (c) hold.
#include <optional>

namespace k3lab::experiments::hybrid_attention {

struct ArmPoint {
  double retrieval = 0;  // mean of MQAR and needle accuracy
  double memory = 0;     // inference bytes
};

struct Decision {
  bool retrieval_above_kda = false;     // (a)
  bool memory_below_full = false;       // (b)
  std::optional<bool> above_frontier;   // (c); nullopt when undefined
  double frontier_retrieval = 0;        // the line's retrieval at the hybrid's memory
  bool supported() const { return retrieval_above_kda && memory_below_full && above_frontier.value_or(false); }
};

Decision decide(const ArmPoint& hybrid, const ArmPoint& all_kda, const ArmPoint& full_attention);

}  // namespace k3lab::experiments::hybrid_attention
