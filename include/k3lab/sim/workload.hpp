#pragma once
// Synthetic workloads: a mix is a sequence of phases (each a share of the arrivals), each with an
// arrival process (Poisson, or Gamma inter-arrivals with a coefficient of variation for bursts) and
// request classes drawn by weight, each with its own prompt and output length distributions.
// Every draw comes from core::Rng in a fixed order per arrival: gap, class, prompt, output.
#include <cstdint>
#include <string>
#include <vector>

#include "k3lab/core/rng.hpp"
#include "k3lab/sim/trace.hpp"

namespace k3lab::sim {

struct LengthDistribution {
  enum class Kind { Fixed, Uniform, LogNormal };
  Kind kind = Kind::Fixed;
  std::uint32_t value = 0;   // Fixed
  std::uint32_t min = 0;     // Uniform bounds; LogNormal clamp
  std::uint32_t max = 0;
  double median = 0;         // LogNormal: exp(mu)
  double sigma = 0;          // LogNormal: sd of log

  std::uint32_t sample(core::Rng& rng) const;
  double mean_estimate() const;  // for plan estimates (clamping ignored for lognormal)
};

struct ArrivalProcess {
  enum class Kind { Poisson, Gamma };
  Kind kind = Kind::Poisson;
  double rate_per_second = 1.0;
  double cv = 1.0;  // Gamma: coefficient of variation of inter-arrival gaps (shape = 1/cv^2)

  double sample_gap_seconds(core::Rng& rng) const;
};

struct RequestClass {
  std::string name;
  double weight = 1.0;
  LengthDistribution prompt_tokens;
  LengthDistribution output_tokens;
};

struct Phase {
  double arrival_fraction = 1.0;  // share of the trace's arrivals
  ArrivalProcess arrival;
  std::vector<RequestClass> classes;
};

struct MixSpec {
  std::string id;
  std::string description;
  std::vector<Phase> phases;

  // Throws std::invalid_argument naming the mix and field (fractions must sum to 1, ...).
  void validate() const;
};

// Arrival counts per phase for a trace of `arrivals` (rounded; the last phase takes the rest).
std::vector<std::uint64_t> phase_counts(const MixSpec& mix, std::uint64_t arrivals);

Trace generate_trace(const MixSpec& mix, std::uint64_t arrivals, std::uint64_t seed, std::string source);

}  // namespace k3lab::sim
