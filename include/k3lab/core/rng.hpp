#pragma once
// The one documented generator for everything k3lab records (DESIGN.md section 5).
// splitmix64 seeds and derives streams; xoshiro256** draws. Distributions are written here, not taken
// from <random>, because libstdc++ and libc++ produce different sequences from the same engine.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace k3lab::core {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a, for turning names (arm ids, unit ids) into stream coordinates.
inline std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

// Mixes a seed with coordinates: stream_seed(protocol_seed, {mix, trace}) is independent per coordinate.
inline std::uint64_t stream_seed(std::uint64_t seed, std::initializer_list<std::uint64_t> coords) {
  std::uint64_t state = seed;
  std::uint64_t out = splitmix64(state);
  for (std::uint64_t c : coords) {
    state ^= c + 0x632BE59BD9B4E019ull + (out << 6) + (out >> 2);
    out = splitmix64(state);
  }
  return out;
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe for log().
  double uniform_open0() { return 1.0 - uniform(); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  // Uniform integer in [0, n) without modulo bias (Lemire's method).
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    __uint128_t m = static_cast<__uint128_t>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  double exponential(double rate) { return -std::log(uniform_open0()) / rate; }

  // Standard normal by Box-Muller (one value per call; the pair's twin is discarded for simplicity).
  double normal() {
    const double u1 = uniform_open0();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double normal(double mean, double stddev) { return mean + stddev * normal(); }
  double lognormal(double mu, double sigma) { return std::exp(normal(mu, sigma)); }

  // Gamma(shape, scale) by Marsaglia-Tsang; shape < 1 via the boost u^(1/shape).
  double gamma(double shape, double scale) {
    if (shape < 1.0) {
      const double u = uniform_open0();
      return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal();
      double v = 1.0 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = uniform_open0();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
    }
  }

  bool bernoulli(double p) { return uniform() < p; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace k3lab::core
