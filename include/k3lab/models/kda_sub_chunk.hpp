#pragma once
// The sub-block length of KDA's chunkwise form: models::kda_chunkwise computes each chunk's intra-chunk
// scores in blocks this long. Torch-free, so that the training-memory estimate (training_memory.cpp)
// counts the same blocks without including LibTorch.
#include <cstdint>

namespace k3lab::models {

inline constexpr std::int64_t kKdaSubChunk = 16;

}  // namespace k3lab::models
