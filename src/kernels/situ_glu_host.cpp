#include <cmath>
#include <stdexcept>
#include <string>

#include "k3lab/kernels/situ_glu.hpp"

namespace k3lab::kernels {

SituGluShape SituGluShape::contiguous(std::int64_t rows, std::int64_t cols) {
  return {rows, cols, cols, cols, cols};
}

void situ_glu_validate(const SituGluShape& shape, const SituGluBetas& betas) {
  if (shape.rows < 0 || shape.cols < 0) {
    throw std::invalid_argument("SiTU-GLU: rows and cols must be >= 0 (got " +
                                std::to_string(shape.rows) + ", " + std::to_string(shape.cols) + ")");
  }
  if (shape.gate_stride < shape.cols || shape.up_stride < shape.cols ||
      shape.out_stride < shape.cols) {
    throw std::invalid_argument(
        "SiTU-GLU: every row stride must be >= cols (use SituGluShape::contiguous for packed "
        "matrices, or 2 * cols for the halves of a fused projection)");
  }
  if (!(betas.gate > 0.0f) || !(betas.up > 0.0f) || !std::isfinite(betas.gate) ||
      !std::isfinite(betas.up)) {
    throw std::invalid_argument("SiTU-GLU: betas must be finite and > 0 (K3 uses gate 4, up 25)");
  }
}

}  // namespace k3lab::kernels
