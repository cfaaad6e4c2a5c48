// batched_matmul against torch::matmul: the same values bit for bit, forward and backward, on
// contiguous, strided and transposed operands, at two threads (split) and one (torch::matmul).
#include <k3lab/core/rng.hpp>
#include <k3lab/models/batched_matmul.hpp>
#include <k3lab/models/random_tensor.hpp>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace k3lab::models {
namespace {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : previous_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ThreadCount() { at::set_num_threads(previous_); }

 private:
  int previous_;
};

struct Products {
  torch::Tensor out, grad_a, grad_b;
};

template <class Matmul>
Products run(Matmul matmul, const torch::Tensor& a0, const torch::Tensor& b0,
             const torch::Tensor& upstream) {
  const auto a = a0.detach().clone().requires_grad_(true);
  const auto b = b0.detach().clone().requires_grad_(true);
  // The strided and transposed views the KDA chunk loop multiplies: a chunk of a larger tensor,
  // and b transposed.
  const auto out = matmul(a.select(2, 1), b.select(2, 0).transpose(-1, -2));
  (out * upstream).sum().backward();
  return {out.detach(), a.grad(), b.grad()};
}

void expect_bit_identical(torch::ScalarType dtype, std::int64_t m, std::int64_t k, std::int64_t n) {
  core::Rng rng(11);
  const auto a = normal_tensor({3, 4, 2, m, k}, rng, 0, 1, dtype);  // (B, H, N, m, k)
  const auto b = normal_tensor({3, 4, 2, n, k}, rng, 0, 1, dtype);  // (B, H, N, n, k)
  const auto upstream = normal_tensor({3, 4, m, n}, rng, 0, 1, dtype);
  const auto expected = run([](auto x, auto y) { return torch::matmul(x, y); }, a, b, upstream);
  const auto got = run([](auto x, auto y) { return batched_matmul(x, y); }, a, b, upstream);
  EXPECT_TRUE(torch::equal(got.out, expected.out)) << m << "x" << k << "x" << n;
  EXPECT_TRUE(torch::equal(got.grad_a, expected.grad_a)) << m << "x" << k << "x" << n;
  EXPECT_TRUE(torch::equal(got.grad_b, expected.grad_b)) << m << "x" << k << "x" << n;
}

TEST(BatchedMatmul, SplitAcrossThreadsEqualsMatmulBitForBit) {
  ThreadCount two(2);
  expect_bit_identical(torch::kFloat, 64, 64, 64);  // the chunk loop's products
  expect_bit_identical(torch::kFloat, 16, 64, 48);  // intra-chunk sub-block scores
  expect_bit_identical(torch::kDouble, 8, 16, 8);
  expect_bit_identical(torch::kFloat, 3, 5, 7);     // below ATen's small-product bound
}

TEST(BatchedMatmul, OneThreadIsMatmul) {
  ThreadCount one(1);
  expect_bit_identical(torch::kFloat, 64, 64, 64);
}

TEST(BatchedMatmul, RefusesMismatchedOperands) {
  const auto a = torch::zeros({2, 3, 4});
  EXPECT_THROW(batched_matmul(a, torch::zeros({2, 5, 4})), std::invalid_argument);
  EXPECT_THROW(batched_matmul(a, torch::zeros({4, 4})), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::models
