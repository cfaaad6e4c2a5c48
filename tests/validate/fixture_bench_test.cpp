#include "k3lab/validate/fixture_bench.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace k3lab::validate {
namespace {

// The benchmark prints numbers and asserts no time; this only checks that it runs every row.
TEST(FixtureBench, PrintsOneRowPerFamilyAndSize) {
  std::ostringstream out;
  run_fixture_bench(out, 1);
  const std::string text = out.str();
  std::size_t rows = 0;
  for (std::size_t pos = text.find("\n| "); pos != std::string::npos; pos = text.find("\n| ", pos + 1)) ++rows;
  EXPECT_EQ(rows, 10u);  // 5 families x 2 sizes
  EXPECT_NE(text.find("| repository | 1048576 |"), std::string::npos);
}

}  // namespace
}  // namespace k3lab::validate
