#pragma once
// One contiguous token sequence made of several shards (or of tokens held in memory), read by
// global offset. Training windows may cross shard boundaries: the shards are read as one stream in
// the order given (sorted file names for a dataset directory).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "k3lab/train/token_shard.hpp"

namespace k3lab::train {

class TokenStream {
 public:
  TokenStream() = default;
  static TokenStream from_tokens(std::vector<std::uint32_t> tokens);
  static TokenStream from_shards(const std::vector<std::filesystem::path>& shards);

  std::int64_t size() const { return total_; }
  bool empty() const { return total_ == 0; }
  // Copies tokens [offset, offset + count) into out; throws std::out_of_range past the end.
  void copy(std::int64_t offset, std::int64_t count, std::int64_t* out) const;
  std::vector<std::int64_t> slice(std::int64_t offset, std::int64_t count) const;
  // A stream over tokens [offset, offset + count) of this one (shares the storage).
  TokenStream sub(std::int64_t offset, std::int64_t count) const;

 private:
  struct Part {
    std::shared_ptr<const MappedTokenShard> shard;                // either a shard
    std::shared_ptr<const std::vector<std::uint32_t>> memory;     // or tokens in memory
    std::int64_t begin = 0;   // first token of the part inside its storage
    std::int64_t length = 0;  // tokens of the part
  };
  std::vector<Part> parts_;
  std::vector<std::int64_t> starts_;  // global offset of each part
  std::int64_t total_ = 0;
  void add(Part part);
};

}  // namespace k3lab::train
