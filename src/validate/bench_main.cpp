// k3lab_validate_bench: prints context-probe fixture generation times (see fixture_bench.hpp).
#include <cstdlib>
#include <iostream>

#include "k3lab/validate/fixture_bench.hpp"

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 3;
  k3lab::validate::run_fixture_bench(std::cout, repetitions);
  return 0;
}
