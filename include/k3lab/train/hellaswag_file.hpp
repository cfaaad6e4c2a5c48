#pragma once
// llm.c's multiple-choice evaluation file (hellaswag_val.bin: dev/data/hellaswag.py tokenises
// HellaSwag with the GPT-2 tokenizer and writes it with data_common.py's write_evalfile; llm.c's
// EvalLoader reads it), so the file users already have is scored as it is (docs/downstream.md):
//   header: 256 little-endian int32; [0] magic 20240522, [1] version 1, [2] example count,
//           [3] bytes of the longest example
//   each example, little-endian uint16 words:
//     65535 (start delimiter), example bytes (these words included), example index (0, 1, ...),
//     label, completion count (4), context length, context tokens,
//     then per completion: its length, its tokens
// Nothing may follow the last example. Every check names the file, the example, its byte offset and
// the fix; the reader also returns the file's SHA-256, which a protocol freezes.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "k3lab/train/multiple_choice_item.hpp"

namespace k3lab::train {

inline constexpr std::int32_t kEvalFileVersion = 1;  // magic: kEvalFileMagic (token_shard.hpp)
inline constexpr std::uint16_t kEvalExampleStart = 65535;
inline constexpr std::int64_t kEvalFileCompletions = 4;  // llm.c's EvalLoader assumes exactly 4
inline constexpr std::int64_t kGpt2VocabSize = 50257;    // the tokenizer hellaswag.py writes with

struct EvalFile {
  std::filesystem::path path;
  std::string sha256;  // of the whole file
  std::int64_t bytes = 0;
  std::int64_t longest_example_bytes = 0;  // header[3]
  std::vector<MultipleChoiceItem> items;   // in file order
};

// Reads and checks the whole file; throws std::runtime_error naming the file, the example index, the
// byte offset and what to do. Every token must be below vocab_size.
EvalFile read_eval_file(const std::filesystem::path& path, std::int64_t vocab_size = kGpt2VocabSize);

}  // namespace k3lab::train
