// The fuzz targets' driver for builds without libFuzzer (the project's g++ build, CI): runs every seed
// in the corpus folder, then `--mutations` deterministic mutations of them (bit flips, byte inserts
// and deletes, truncation, repeated and spliced ranges) drawn from `--seed`. An input that makes the
// target throw an undocumented exception is written to `--crash-dir` (default: the working directory)
// and the driver exits 1; a crash or an abort ends it as such. Coverage-guided fuzzing is
// scripts/fuzz.sh (clang + libFuzzer + sanitizers).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "targets/fuzz_target.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : state_(seed | 1) {}

  Bytes mutate(const Bytes& input, const Bytes& other) {
    Bytes out = input;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int i = 0; i < edits; ++i) edit(out, other);
    return out;
  }

 private:
  std::uint64_t next() {  // xorshift64*
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ULL;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

  void edit(Bytes& b, const Bytes& other) {
    static const std::uint8_t kInteresting[] = {0, '\n', '\r', ':', '"', '{', '}', '[', ']', ',', '-', '0',
                                                '9', 'e', '.', '\\', 0x7f, 0x80, 0xff};
    switch (next() % 7) {
      case 0: if (!b.empty()) b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8)); break;
      case 1: b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), kInteresting[below(sizeof kInteresting)]); break;
      case 2: if (!b.empty()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(below(b.size()))); break;
      case 3: b.resize(below(b.size() + 1)); break;
      case 4: {  // repeat a range
        if (b.empty()) break;
        const std::size_t from = below(b.size()), len = 1 + below(std::min<std::size_t>(64, b.size() - from));
        const Bytes range(b.begin() + static_cast<std::ptrdiff_t>(from), b.begin() + static_cast<std::ptrdiff_t>(from + len));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), range.begin(), range.end());
        break;
      }
      case 5: {  // splice in a range of another seed
        if (other.empty()) break;
        const std::size_t from = below(other.size()), len = 1 + below(std::min<std::size_t>(256, other.size() - from));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), other.begin() + static_cast<std::ptrdiff_t>(from),
                 other.begin() + static_cast<std::ptrdiff_t>(from + len));
        break;
      }
      default: if (!b.empty()) b[below(b.size())] = kInteresting[below(sizeof kInteresting)]; break;
    }
  }

  std::uint64_t state_;
};

Bytes read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs one input; on an undocumented exception saves it and returns false.
bool run_one(const Bytes& input, const std::filesystem::path& crash_dir, std::size_t index) {
  try {
    LLVMFuzzerTestOneInput(input.data(), input.size());
    return true;
  } catch (const std::exception& e) {
    const auto file = crash_dir / ("crash-" + std::to_string(index));
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(input.data()),
                                                static_cast<std::streamsize>(input.size()));
    std::cerr << "fuzz: input " << index << " threw an undocumented exception: " << e.what() << "\n"
              << "fuzz: saved as " << file << "; rerun this binary with it as the only seed to reproduce\n";
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Replays a fuzz target's seed corpus and deterministic mutations of it."};
  std::string corpus;
  std::size_t mutations = 2000;
  std::uint64_t seed = 1;
  std::string crash_dir = ".";
  app.add_option("corpus", corpus, "Seed file or folder of seed files")->required()->check(CLI::ExistingPath);
  app.add_option("--mutations", mutations, "Mutated inputs to run after the seeds")->capture_default_str();
  app.add_option("--seed", seed, "Mutation seed")->capture_default_str();
  app.add_option("--crash-dir", crash_dir, "Where a failing input is written")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::vector<Bytes> seeds;
  if (std::filesystem::is_directory(corpus)) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(corpus)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) seeds.push_back(read_file(f));
  } else {
    seeds.push_back(read_file(corpus));
  }
  std::size_t index = 0;
  for (const auto& s : seeds) {
    if (!run_one(s, crash_dir, index++)) return 1;
  }
  Mutator mutator(seed);
  for (std::size_t i = 0; i < mutations && !seeds.empty(); ++i) {
    const Bytes& base = seeds[i % seeds.size()];
    const Bytes& other = seeds[(i * 7 + 3) % seeds.size()];
    if (!run_one(mutator.mutate(base, other), crash_dir, index++)) return 1;
  }
  std::cout << "fuzz: " << index << " inputs (" << seeds.size() << " seeds), no undocumented exception\n";
  return 0;
}
