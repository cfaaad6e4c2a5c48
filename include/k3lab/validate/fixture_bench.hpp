#pragma once
// Benchmark of context-probe fixture generation (goal: a 1,048,576-token fixture in under 100 ms)
// and of the reader on the same prompts. Prints a markdown table; asserts nothing.
#include <ostream>

namespace k3lab::validate {

// Generates one fixture per family at 32,768 and 1,048,576 target tokens with the default estimator,
// `repetitions` times each, and prints the best and median wall times.
void run_fixture_bench(std::ostream& out, int repetitions = 3);

}  // namespace k3lab::validate
