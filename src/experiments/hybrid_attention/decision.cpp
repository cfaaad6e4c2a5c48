#include "hybrid_attention/decision.hpp"

namespace k3lab::experiments::hybrid_attention {

Decision decide(const ArmPoint& hybrid, const ArmPoint& all_kda, const ArmPoint& full_attention) {
  Decision d;
  d.retrieval_above_kda = hybrid.retrieval > all_kda.retrieval;
  d.memory_below_full = hybrid.memory < full_attention.memory;
  if (full_attention.memory != all_kda.memory) {
    d.frontier_retrieval = all_kda.retrieval + (full_attention.retrieval - all_kda.retrieval) *
                                                   (hybrid.memory - all_kda.memory) /
                                                   (full_attention.memory - all_kda.memory);
    d.above_frontier = hybrid.retrieval > d.frontier_retrieval;
  }
  return d;
}

}  // namespace k3lab::experiments::hybrid_attention
