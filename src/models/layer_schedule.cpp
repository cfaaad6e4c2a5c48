#include <k3lab/models/layer_schedule.hpp>

#include <stdexcept>

namespace k3lab::models {

char to_char(MixerKind kind) {
  switch (kind) {
    case MixerKind::Kda: return 'K';
    case MixerKind::Mla: return 'M';
    case MixerKind::Attention: return 'A';
  }
  return '?';
}

std::string to_string(MixerKind kind) {
  switch (kind) {
    case MixerKind::Kda: return "kda";
    case MixerKind::Mla: return "mla";
    case MixerKind::Attention: return "attention";
  }
  return "unknown";
}

std::vector<MixerKind> parse_schedule(std::string_view schedule) {
  if (schedule.empty()) {
    throw std::invalid_argument("layer schedule is empty: write one character per layer (K = KDA, "
                                "M = MLA, A = full attention), e.g. \"KKKM\"");
  }
  std::vector<MixerKind> kinds;
  kinds.reserve(schedule.size());
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    switch (schedule[i]) {
      case 'K': kinds.push_back(MixerKind::Kda); break;
      case 'M': kinds.push_back(MixerKind::Mla); break;
      case 'A': kinds.push_back(MixerKind::Attention); break;
      default:
        throw std::invalid_argument("layer schedule \"" + std::string(schedule) + "\": character '" +
                                    std::string(1, schedule[i]) + "' at layer " + std::to_string(i) +
                                    " is not K (KDA), M (MLA) or A (full attention)");
    }
  }
  return kinds;
}

std::string k3_schedule(std::int64_t num_layers) {
  if (num_layers <= 0) throw std::invalid_argument("k3_schedule: num_layers must be positive");
  std::string schedule;
  schedule.reserve(static_cast<std::size_t>(num_layers));
  for (std::int64_t i = 0; i < num_layers; ++i) {
    const bool mla = (i + 1) % 4 == 0 || i + 1 == num_layers;
    schedule.push_back(mla ? 'M' : 'K');
  }
  return schedule;
}

std::string uniform_schedule(MixerKind kind, std::int64_t num_layers) {
  if (num_layers <= 0) throw std::invalid_argument("uniform_schedule: num_layers must be positive");
  return std::string(static_cast<std::size_t>(num_layers), to_char(kind));
}

MixerCounts count_mixers(std::string_view schedule) {
  MixerCounts counts;
  for (auto kind : parse_schedule(schedule)) {
    switch (kind) {
      case MixerKind::Kda: ++counts.kda; break;
      case MixerKind::Mla: ++counts.mla; break;
      case MixerKind::Attention: ++counts.attention; break;
    }
  }
  return counts;
}

}  // namespace k3lab::models
