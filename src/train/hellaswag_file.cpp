#include "k3lab/train/hellaswag_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/token_shard.hpp"

namespace k3lab::train {
namespace {

static_assert(std::endian::native == std::endian::little,
              "llm.c's evaluation file is little-endian; this reader decodes it without byte swapping");

constexpr std::int64_t kEvalHeaderBytes = kShardHeaderBytes;  // 256 x int32, as in the token shards
constexpr std::int64_t kEvalFixedWords = 6;  // delimiter, bytes, index, label, completions, context length
constexpr const char* kRegenerate = "regenerate it with llm.c's dev/data/hellaswag.py (docs/downstream.md)";

// Walks the file's bytes; every failure names the file, the example and the byte offset.
class EvalFileParser {
 public:
  EvalFileParser(const std::filesystem::path& path, std::string bytes, std::int64_t vocab_size)
      : path_(path), bytes_(std::move(bytes)), size_(static_cast<std::int64_t>(bytes_.size())), vocab_(vocab_size) {}

  EvalFile parse() {
    const std::int64_t declared = check_header();
    EvalFile file;
    file.path = path_;
    file.bytes = size_;
    file.longest_example_bytes = header_int(3);
    std::int64_t offset = kEvalHeaderBytes;
    std::int64_t longest = 0;
    for (std::int64_t i = 0; i < declared; ++i) {
      if (offset == size_) {
        fail("header declares " + std::to_string(declared) + " examples (header[2]) but the file ends after " +
             std::to_string(i) + ", at byte " + std::to_string(offset) +
             "; the file is truncated or the count is "
             "wrong: " +
             kRegenerate);
      }
      const std::int64_t length = parse_example(i, offset, file.items);
      longest = std::max(longest, length);
      offset += length;
    }
    check_after_last(declared, offset);
    if (longest != file.longest_example_bytes) {
      fail("header[3] declares the longest example as " + std::to_string(file.longest_example_bytes) +
           " bytes but the longest is " + std::to_string(longest) + " bytes (llm.c sizes its buffer by it); " +
           kRegenerate);
    }
    return file;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("eval file " + path_.string() + ": " + what);
  }
  [[noreturn]] void fail_at(std::int64_t example, std::int64_t offset, const std::string& what) const {
    fail("example " + std::to_string(example) + " at byte " + std::to_string(offset) + ": " + what);
  }

  std::int32_t header_int(std::int64_t i) const {
    std::int32_t value;
    std::memcpy(&value, bytes_.data() + 4 * i, 4);
    return value;
  }
  std::uint16_t word_at(std::int64_t offset) const {
    std::uint16_t value;
    std::memcpy(&value, bytes_.data() + offset, 2);
    return value;
  }

  std::int64_t check_header() const {
    if (size_ < kEvalHeaderBytes) {
      fail("only " + std::to_string(size_) +
           " bytes, shorter than the 1024-byte header (256 x int32); the file is "
           "truncated or not an llm.c evaluation file: " +
           kRegenerate);
    }
    const std::int32_t magic = header_int(0);
    if (magic == kShardMagicU16 || magic == kShardMagicU32) {
      fail("magic " + std::to_string(magic) +
           " marks an llm.c token shard, not an evaluation file; point the suite "
           "at hellaswag_val.bin (magic 20240522)");
    }
    if (magic != kEvalFileMagic) {
      fail("unknown magic " + std::to_string(magic) +
           "; an llm.c evaluation file starts with 20240522: " + kRegenerate);
    }
    if (header_int(1) != kEvalFileVersion) {
      fail("version " + std::to_string(header_int(1)) +
           "; this reader knows version 1 (llm.c's write_evalfile): " + kRegenerate);
    }
    if (header_int(2) <= 0) {
      fail("header declares " + std::to_string(header_int(2)) +
           " examples (header[2]); a suite needs at least one: " + kRegenerate);
    }
    return header_int(2);
  }

  // Reads one example starting at `start`; returns its byte count.
  std::int64_t parse_example(std::int64_t index, std::int64_t start, std::vector<MultipleChoiceItem>& items) const {
    if (size_ - start < 3 * 2) {
      fail_at(index, start,
              "truncated: " + std::to_string(size_ - start) +
                  " bytes left, fewer than the 6 of the "
                  "delimiter, byte count and index; " +
                  kRegenerate);
    }
    if (word_at(start) != kEvalExampleStart) {
      fail_at(index, start,
              "expected the start delimiter 65535, found " + std::to_string(word_at(start)) +
                  "; the previous example's byte count is wrong or the file is corrupt: " + kRegenerate);
    }
    const std::int64_t length = word_at(start + 2);
    if (length % 2 != 0 || length < kEvalFixedWords * 2) {
      fail_at(index, start,
              "declares " + std::to_string(length) + " bytes, not an even count of at least " +
                  std::to_string(kEvalFixedWords * 2) + " (its fixed fields); " + kRegenerate);
    }
    if (start + length > size_) {
      fail_at(index, start,
              "declares " + std::to_string(length) + " bytes but only " + std::to_string(size_ - start) +
                  " remain; the file is truncated: " + kRegenerate);
    }
    if (word_at(start + 4) != index) {
      fail_at(index, start,
              "its index field says " + std::to_string(word_at(start + 4)) +
                  "; examples must be numbered 0, 1, ... in file order: " + kRegenerate);
    }
    std::int64_t cursor = start + 6;
    const auto need = [&](std::int64_t words, const std::string& field) {
      if (cursor + 2 * words > start + length) {
        fail_at(index, start,
                "its fields need more than the declared " + std::to_string(length) + " bytes (" + field +
                    " would end at byte " + std::to_string(cursor + 2 * words) +
                    "); the byte count is wrong: " + kRegenerate);
      }
    };
    const auto take = [&](const char* field) -> std::int64_t {
      need(1, field);
      cursor += 2;
      return word_at(cursor - 2);
    };
    const auto take_tokens = [&](std::int64_t count, const std::string& what) {
      need(count, "the " + std::to_string(count) + " tokens of " + what);
      std::vector<std::int64_t> tokens(static_cast<std::size_t>(count));
      for (std::int64_t t = 0; t < count; ++t, cursor += 2) {
        tokens[static_cast<std::size_t>(t)] = word_at(cursor);
        if (tokens[static_cast<std::size_t>(t)] >= vocab_) {
          fail_at(index, start,
                  what + " token " + std::to_string(t) + " (byte " + std::to_string(cursor) + ") is " +
                      std::to_string(tokens[static_cast<std::size_t>(t)]) + ", not below the vocabulary size " +
                      std::to_string(vocab_) +
                      "; the file was written with another tokenizer (hellaswag.py uses GPT-2's)");
        }
      }
      return tokens;
    };
    MultipleChoiceItem item;
    item.label = take("the label");
    const std::int64_t completions = take("the completion count");
    if (completions != kEvalFileCompletions) {
      fail_at(index, start,
              "has " + std::to_string(completions) +
                  " completions; llm.c's format (and its EvalLoader) "
                  "has exactly 4: " +
                  kRegenerate);
    }
    if (item.label >= completions) {
      fail_at(index, start, "label " + std::to_string(item.label) + " is not a completion index 0..3: " + kRegenerate);
    }
    const std::int64_t context_length = take("the context length");
    if (context_length == 0) fail_at(index, start, "empty context (0 tokens): " + std::string(kRegenerate));
    item.context = take_tokens(context_length, "context");
    for (std::int64_t k = 0; k < completions; ++k) {
      const std::string name = "completion " + std::to_string(k);
      const std::int64_t count = take("a completion length");
      if (count == 0) fail_at(index, start, name + " is empty (0 tokens); every ending needs a token: " + kRegenerate);
      item.endings.push_back(take_tokens(count, name));
    }
    if (cursor != start + length) {
      fail_at(index, start,
              "declares " + std::to_string(length) + " bytes but its fields take " + std::to_string(cursor - start) +
                  "; the byte count is wrong: " + kRegenerate);
    }
    items.push_back(std::move(item));
    return length;
  }

  void check_after_last(std::int64_t declared, std::int64_t offset) const {
    if (offset == size_) return;
    if (size_ - offset >= 2 && word_at(offset) == kEvalExampleStart) {
      fail("header declares " + std::to_string(declared) + " examples (header[2]) but another example starts at byte " +
           std::to_string(offset) + "; the count is wrong: " + kRegenerate);
    }
    fail(std::to_string(size_ - offset) + " trailing bytes at byte " + std::to_string(offset) + " after the " +
         std::to_string(declared) + " declared examples (two files concatenated, or a bad copy): " + kRegenerate);
  }

  std::filesystem::path path_;
  std::string bytes_;
  std::int64_t size_;
  std::int64_t vocab_;
};

std::string read_whole_eval_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error("eval file " + path.string() +
                             ": not found (or not a regular file); place llm.c's "
                             "hellaswag_val.bin there as docs/downstream.md describes");
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("eval file " + path.string() + ": cannot read: " + std::strerror(errno));
  return bytes;
}

}  // namespace

EvalFile read_eval_file(const std::filesystem::path& path, std::int64_t vocab_size) {
  if (vocab_size <= 0) throw std::invalid_argument("read_eval_file: vocab_size must be positive");
  std::string bytes = read_whole_eval_file(path);
  const std::string sha = core::sha256_hex(bytes);
  auto file = EvalFileParser(path, std::move(bytes), vocab_size).parse();
  file.sha256 = sha;
  return file;
}

}  // namespace k3lab::train
