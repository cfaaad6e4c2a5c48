#include "k3lab/train/token_stream.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace k3lab::train {

void TokenStream::add(Part part) {
  if (part.length == 0) return;
  starts_.push_back(total_);
  total_ += part.length;
  parts_.push_back(std::move(part));
}

TokenStream TokenStream::from_tokens(std::vector<std::uint32_t> tokens) {
  TokenStream s;
  auto memory = std::make_shared<const std::vector<std::uint32_t>>(std::move(tokens));
  s.add({nullptr, memory, 0, static_cast<std::int64_t>(memory->size())});
  return s;
}

TokenStream TokenStream::from_shards(const std::vector<std::filesystem::path>& shards) {
  TokenStream s;
  for (const auto& path : shards) {
    auto shard = std::make_shared<const MappedTokenShard>(path);
    s.add({shard, nullptr, 0, shard->size()});
  }
  return s;
}

void TokenStream::copy(std::int64_t offset, std::int64_t count, std::int64_t* out) const {
  if (offset < 0 || count < 0 || offset + count > total_) {
    throw std::out_of_range("token stream: tokens [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                            ") are outside its " + std::to_string(total_) + " tokens");
  }
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  std::size_t index = static_cast<std::size_t>(it - starts_.begin()) - 1;
  while (count > 0) {
    const Part& part = parts_[index];
    const std::int64_t inside = offset - starts_[index];
    const std::int64_t take = std::min(count, part.length - inside);
    if (part.shard) {
      part.shard->copy(part.begin + inside, take, out);
    } else {
      const auto* src = part.memory->data() + part.begin + inside;
      for (std::int64_t i = 0; i < take; ++i) out[i] = src[i];
    }
    out += take;
    offset += take;
    count -= take;
    ++index;
  }
}

std::vector<std::int64_t> TokenStream::slice(std::int64_t offset, std::int64_t count) const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  copy(offset, count, out.data());
  return out;
}

TokenStream TokenStream::sub(std::int64_t offset, std::int64_t count) const {
  if (offset < 0 || count < 0 || offset + count > total_) {
    throw std::out_of_range("token stream: sub-range [" + std::to_string(offset) + ", " +
                            std::to_string(offset + count) + ") is outside its " + std::to_string(total_) + " tokens");
  }
  TokenStream s;
  for (std::size_t i = 0; i < parts_.size() && count > 0; ++i) {
    const std::int64_t part_end = starts_[i] + parts_[i].length;
    if (part_end <= offset) continue;
    const std::int64_t inside = offset - starts_[i];
    const std::int64_t take = std::min(count, parts_[i].length - inside);
    Part p = parts_[i];
    p.begin += inside;
    p.length = take;
    s.add(std::move(p));
    offset += take;
    count -= take;
  }
  return s;
}

}  // namespace k3lab::train
