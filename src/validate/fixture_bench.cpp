#include "k3lab/validate/fixture_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/context_reader.hpp"

namespace k3lab::validate {
namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void run_fixture_bench(std::ostream& out, int repetitions) {
  repetitions = std::max(1, repetitions);
  out << "| family | target tokens | prompt tokens | prompt bytes | sections | generate best ms | generate median ms "
         "| reader ms |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (std::size_t target : {std::size_t{32768}, std::size_t{1048576}}) {
    for (FixtureFamily family : kFixtureFamilies) {
      FixtureRequest request;
      request.seed = 20260803;
      request.family = family;
      request.index = 7;
      request.target_tokens = target;
      request.prefix_id = "bench";
      std::vector<double> times;
      ContextFixture fixture;
      for (int r = 0; r < repetitions; ++r) {
        const auto start = std::chrono::steady_clock::now();
        fixture = generate_context_fixture(request);
        times.push_back(milliseconds_since(start));
      }
      std::sort(times.begin(), times.end());
      const auto reader_start = std::chrono::steady_clock::now();
      const ReaderReply reply = read_fixture_prompt(fixture.prompt, ReaderConfig{});
      const double reader_ms = milliseconds_since(reader_start);
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %zu | %zu | %zu | %zu | %.1f | %.1f | %.1f |\n",
                    std::string(family_id(family)).c_str(), target, fixture.prompt_tokens, fixture.prompt.size(),
                    fixture.section_count, times.front(), times[times.size() / 2], reader_ms);
      out << line;
      (void)reply;
    }
  }
}

}  // namespace k3lab::validate
