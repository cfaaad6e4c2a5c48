#pragma once
// Token shards in the llm.c / modded-nanogpt `.bin` format, so that FineWeb shards users already
// have can be trained on as they are (reference/style.md section 2.5):
//   header: 256 little-endian int32; header[0] = magic, header[1] = version, header[2] = token count
//   body:   token count x uint16 (magic 20240520, version 1) or x uint32 (magic 20240801, version 7)
// The file size must be exactly 1024 + count x width. Every check names the file and says what to do.
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace k3lab::train {

inline constexpr std::int32_t kShardMagicU16 = 20240520;  // llm.c GPT-2 shards, uint16 tokens
inline constexpr std::int32_t kShardVersionU16 = 1;
inline constexpr std::int32_t kShardMagicU32 = 20240801;  // llm.c LLaMA-3 shards, uint32 tokens
inline constexpr std::int32_t kShardVersionU32 = 7;
inline constexpr std::int32_t kEvalFileMagic = 20240522;  // llm.c eval example files (not token shards)
inline constexpr std::int64_t kShardHeaderInts = 256;
inline constexpr std::int64_t kShardHeaderBytes = kShardHeaderInts * 4;

enum class TokenWidth { U16 = 2, U32 = 4 };

struct ShardInfo {
  TokenWidth width = TokenWidth::U16;
  std::int64_t num_tokens = 0;
};

// Reads and checks the header and the file size; throws std::runtime_error naming the file and the fix.
ShardInfo inspect_token_shard(const std::filesystem::path& path);

// Whole shard into memory (tests, small corpora). Large shards are read through MappedTokenShard.
std::vector<std::uint32_t> read_token_shard(const std::filesystem::path& path);

// Writes atomically (temporary file, then rename). U16 rejects tokens above 65535.
void write_token_shard(const std::filesystem::path& path, std::span<const std::uint32_t> tokens,
                       TokenWidth width = TokenWidth::U16);

// A read-only memory map of one checked shard; tokens are decoded on access.
class MappedTokenShard {
 public:
  explicit MappedTokenShard(const std::filesystem::path& path);
  ~MappedTokenShard();
  MappedTokenShard(const MappedTokenShard&) = delete;
  MappedTokenShard& operator=(const MappedTokenShard&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const ShardInfo& info() const { return info_; }
  std::int64_t size() const { return info_.num_tokens; }
  // Copies tokens [offset, offset + count) into out (bounds-checked).
  void copy(std::int64_t offset, std::int64_t count, std::int64_t* out) const;

 private:
  std::filesystem::path path_;
  ShardInfo info_;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
};

}  // namespace k3lab::train
