#include <iostream>

#include "k3lab/api/sse_bench.hpp"

int main() {
  k3lab::api::run_sse_bench(std::cout);
  return 0;
}
