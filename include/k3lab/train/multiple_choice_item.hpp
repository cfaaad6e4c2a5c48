#pragma once
// One multiple-choice item (torch-free, so the suite readers and generators build without LibTorch);
// multiple_choice.hpp scores them.
#include <cstdint>
#include <vector>

namespace k3lab::train {

struct MultipleChoiceItem {
  std::vector<std::int64_t> context;               // >= 1 token
  std::vector<std::vector<std::int64_t>> endings;  // >= 2 candidates, each >= 1 token
  std::int64_t label = 0;                          // index of the true ending
};

}  // namespace k3lab::train
