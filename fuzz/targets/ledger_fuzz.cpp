// Ledger files: the bytes as ledger.jsonl of a run dir, read back by read_ledger (every complete line
// must be a valid record or a named error; a torn last line is skipped). Documented error:
// std::runtime_error naming the file and line.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "fuzz_target.hpp"
#include "k3lab/core/ledger.hpp"

namespace {

const std::filesystem::path& run_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("k3lab-fuzz-ledger-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(run_dir() / "ledger.jsonl", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const auto ledger = k3lab::core::read_ledger(run_dir());
    (void)k3lab::core::describe_duplicates(k3lab::core::duplicate_terminal_records(ledger));
  } catch (const std::runtime_error&) {
  }
  return 0;
}
