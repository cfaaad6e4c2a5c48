#pragma once
// Per-layer token-mixer schedules, written one character per layer:
//   K = KDA, M = MLA, A = full causal attention.   Example: "KKKMKKKMM".
// Torch-free.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::models {

enum class MixerKind { Kda, Mla, Attention };

char to_char(MixerKind kind);
std::string to_string(MixerKind kind);  // "kda", "mla", "attention"

// Throws std::invalid_argument naming the first bad position; an empty schedule is an error.
std::vector<MixerKind> parse_schedule(std::string_view schedule);

// Kimi K3's pattern: groups of 3 KDA + 1 MLA, and the last layer is always MLA.
// 93 layers -> 23 x "KKKM" + "M" = 69 KDA + 24 MLA.
std::string k3_schedule(std::int64_t num_layers);

// The same mixer in every layer (the all-KDA and all-attention arms).
std::string uniform_schedule(MixerKind kind, std::int64_t num_layers);

struct MixerCounts {
  std::int64_t kda = 0;
  std::int64_t mla = 0;
  std::int64_t attention = 0;
};
MixerCounts count_mixers(std::string_view schedule);

}  // namespace k3lab::models
