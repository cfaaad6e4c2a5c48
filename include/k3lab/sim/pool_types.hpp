#pragma once
// Vocabulary shared by the three memory policies and the engine that drives them.
#include <array>
#include <cstdint>
#include <string>

namespace k3lab::sim {

using Bytes = std::int64_t;

inline constexpr std::uint32_t kNoOwner = 0xFFFFFFFFu;

// Why an admission was refused: which resource was short.
enum class Shortage : std::uint8_t {
  None = 0,    // admitted
  StatePool,   // fixed split: no free KDA state slot (the KV pool had room)
  KvPool,      // fixed split: not enough free KV pages (a state slot was free)
  BothPools,   // fixed split: both pools short
  Shared,      // one shared pool (unified arena or padded pool) short
};
inline constexpr int kShortageKinds = 5;
std::string shortage_name(Shortage s);

// Free bytes split by where they sit (at most three places per policy; unused entries are 0).
inline constexpr int kMaxLocations = 3;
using LocationBytes = std::array<Bytes, kMaxLocations>;

enum class PolicyKind : std::uint8_t { FixedSplit, Unified, PaddedSinglePage };
std::string policy_kind_name(PolicyKind kind);
PolicyKind parse_policy_kind(const std::string& name);  // throws std::invalid_argument naming the choices

inline std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

}  // namespace k3lab::sim
