#include <gtest/gtest.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/core/sha256.hpp"

using namespace k3lab::core;

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string text(1000, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  for (std::size_t split : {1u, 55u, 63u, 64u, 65u, 999u}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    EXPECT_EQ(h.hex_digest(), sha256_hex(text)) << "split " << split;
  }
}

TEST(Rng, SplitMixReferenceValue) {
  // splitmix64 seeded with 0: first output from the reference implementation (Vigna).
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFull);
}

TEST(Rng, DeterministicAndStreamsDiffer) {
  Rng a(42), b(42), c(stream_seed(42, {1}));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  Rng d(42);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += d.next_u64() == c.next_u64();
  EXPECT_EQ(same, 0);
  EXPECT_NE(stream_seed(1, {2, 3}), stream_seed(1, {3, 2}));
}

TEST(Rng, DistributionMoments) {
  Rng r(7);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0, sum_g = 0;
  std::uint64_t below_max = 0;
  for (int i = 0; i < n; ++i) {
    sum_u += r.uniform();
    sum_e += r.exponential(2.0);
    const double z = r.normal();
    sum_n += z;
    sum_n2 += z * z;
    sum_g += r.gamma(0.5, 4.0);
    below_max = std::max(below_max, r.below(10));
  }
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
  EXPECT_NEAR(sum_e / n, 0.5, 0.01);
  EXPECT_NEAR(sum_n / n, 0.0, 0.01);
  EXPECT_NEAR(sum_n2 / n, 1.0, 0.02);
  EXPECT_NEAR(sum_g / n, 2.0, 0.05);  // shape * scale
  EXPECT_EQ(below_max, 9u);
}
