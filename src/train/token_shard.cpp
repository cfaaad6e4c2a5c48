#include "k3lab/train/token_shard.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace k3lab::train {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .bin shard format is little-endian; this reader maps it without byte swapping");

std::string where(const std::filesystem::path& path) { return "token shard " + path.string() + ": "; }

ShardInfo check_header(const std::filesystem::path& path, const std::array<std::int32_t, kShardHeaderInts>& header,
                       std::uintmax_t file_bytes) {
  const std::int32_t magic = header[0];
  const std::int32_t version = header[1];
  ShardInfo info;
  if (magic == kShardMagicU16) {
    info.width = TokenWidth::U16;
    if (version != kShardVersionU16) {
      throw std::runtime_error(where(path) + "magic 20240520 (uint16 tokens) needs version 1, found " +
                               std::to_string(version) + "; rewrite the shard with llm.c's write_datafile");
    }
  } else if (magic == kShardMagicU32) {
    info.width = TokenWidth::U32;
    if (version != kShardVersionU32) {
      throw std::runtime_error(where(path) + "magic 20240801 (uint32 tokens) needs version 7, found " +
                               std::to_string(version) + "; rewrite the shard with llm.c's write_datafile");
    }
  } else if (magic == kEvalFileMagic) {
    throw std::runtime_error(where(path) + "magic 20240522 marks an llm.c evaluation example file (e.g. "
                             "hellaswag_val.bin), not a token shard; point the dataset at the *_train_*/*_val_* "
                             "token shards instead");
  } else {
    throw std::runtime_error(where(path) + "unknown magic " + std::to_string(magic) +
                             "; expected 20240520 (uint16 tokens) or 20240801 (uint32 tokens). A headerless "
                             "nanoGPT train.bin (raw uint16) must first be rewritten with the 256-int32 llm.c header");
  }
  const std::int64_t declared = header[2];
  if (declared <= 0) {
    throw std::runtime_error(where(path) + "header declares " + std::to_string(declared) +
                             " tokens; a shard needs at least one token (regenerate it)");
  }
  info.num_tokens = declared;
  const auto expected = static_cast<std::uintmax_t>(kShardHeaderBytes + declared * static_cast<std::int64_t>(info.width));
  if (file_bytes < expected) {
    throw std::runtime_error(where(path) + "truncated: the header declares " + std::to_string(declared) +
                             " tokens (" + std::to_string(expected) + " bytes in all) but the file has " +
                             std::to_string(file_bytes) + " bytes; download or regenerate the shard");
  }
  if (file_bytes > expected) {
    throw std::runtime_error(where(path) + "has " + std::to_string(file_bytes - expected) +
                             " bytes after the " + std::to_string(declared) +
                             " declared tokens; the header's token count (header[2]) is wrong or two files were "
                             "concatenated; regenerate the shard");
  }
  return info;
}

std::array<std::int32_t, kShardHeaderInts> read_header(const std::filesystem::path& path, std::uintmax_t* size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(where(path) + "not found (or not a regular file); check the dataset directory");
  }
  *size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(where(path) + "cannot read its size: " + ec.message());
  if (*size < static_cast<std::uintmax_t>(kShardHeaderBytes)) {
    throw std::runtime_error(where(path) + "only " + std::to_string(*size) +
                             " bytes, shorter than the 1024-byte header (256 x int32); this is not an llm.c "
                             "token shard, or it is truncated");
  }
  std::array<std::int32_t, kShardHeaderInts> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(header.data()), kShardHeaderBytes)) {
    throw std::runtime_error(where(path) + "cannot read the header: " + std::strerror(errno));
  }
  return header;
}

}  // namespace

ShardInfo inspect_token_shard(const std::filesystem::path& path) {
  std::uintmax_t size = 0;
  const auto header = read_header(path, &size);
  return check_header(path, header, size);
}

std::vector<std::uint32_t> read_token_shard(const std::filesystem::path& path) {
  const MappedTokenShard shard(path);
  std::vector<std::int64_t> wide(static_cast<std::size_t>(shard.size()));
  shard.copy(0, shard.size(), wide.data());
  return {wide.begin(), wide.end()};
}

void write_token_shard(const std::filesystem::path& path, std::span<const std::uint32_t> tokens, TokenWidth width) {
  if (tokens.empty()) throw std::invalid_argument(where(path) + "refusing to write an empty shard");
  if (tokens.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument(where(path) + "more than 2^31-1 tokens do not fit the int32 count; split the shard");
  }
  std::array<std::int32_t, kShardHeaderInts> header{};
  header[0] = width == TokenWidth::U16 ? kShardMagicU16 : kShardMagicU32;
  header[1] = width == TokenWidth::U16 ? kShardVersionU16 : kShardVersionU32;
  header[2] = static_cast<std::int32_t>(tokens.size());
  // The header first, then room for the tokens (copying into a resized string trips GCC 12's
  // -Warray-bounds at -O3, which misjudges the string's capacity).
  std::string body(reinterpret_cast<const char*>(header.data()), static_cast<std::size_t>(kShardHeaderBytes));
  body.resize(static_cast<std::size_t>(kShardHeaderBytes) + tokens.size() * static_cast<std::size_t>(width));
  char* out = body.data() + kShardHeaderBytes;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (width == TokenWidth::U16) {
      if (tokens[i] > 0xFFFFu) {
        throw std::invalid_argument(where(path) + "token " + std::to_string(tokens[i]) + " at position " +
                                    std::to_string(i) + " does not fit uint16; write with TokenWidth::U32");
      }
      const auto t = static_cast<std::uint16_t>(tokens[i]);
      std::memcpy(out + 2 * i, &t, 2);
    } else {
      std::memcpy(out + 4 * i, &tokens[i], 4);
    }
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const auto temporary = std::filesystem::path(path.string() + ".partial");
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file.write(body.data(), static_cast<std::streamsize>(body.size())) || !file.flush()) {
      throw std::runtime_error(where(path) + "cannot write " + temporary.string() + ": " + std::strerror(errno));
    }
  }
  std::filesystem::rename(temporary, path);
}

MappedTokenShard::MappedTokenShard(const std::filesystem::path& path) : path_(path), info_(inspect_token_shard(path)) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(where(path) + "cannot open: " + std::strerror(errno));
  map_bytes_ = static_cast<std::size_t>(kShardHeaderBytes + info_.num_tokens * static_cast<std::int64_t>(info_.width));
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error(where(path) + "cannot map into memory: " + std::strerror(map_errno));
  }
}

MappedTokenShard::~MappedTokenShard() {
  if (map_) ::munmap(map_, map_bytes_);
}

void MappedTokenShard::copy(std::int64_t offset, std::int64_t count, std::int64_t* out) const {
  if (offset < 0 || count < 0 || offset + count > info_.num_tokens) {
    throw std::out_of_range(where(path_) + "tokens [" + std::to_string(offset) + ", " +
                            std::to_string(offset + count) + ") are outside the shard's " +
                            std::to_string(info_.num_tokens) + " tokens");
  }
  const auto* body = static_cast<const unsigned char*>(map_) + kShardHeaderBytes;
  if (info_.width == TokenWidth::U16) {
    for (std::int64_t i = 0; i < count; ++i) {
      std::uint16_t t;
      std::memcpy(&t, body + 2 * (offset + i), 2);
      out[i] = t;
    }
  } else {
    for (std::int64_t i = 0; i < count; ++i) {
      std::uint32_t t;
      std::memcpy(&t, body + 4 * (offset + i), 4);
      out[i] = t;
    }
  }
}

}  // namespace k3lab::train
