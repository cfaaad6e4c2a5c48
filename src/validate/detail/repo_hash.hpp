#pragma once
// The canonical repository hash: SHA-256 over "path\0content\0" per file, in order. Shared by the
// pinned-snapshot loader and the fixture assembler (which hashes file sections in document order).
#include <string_view>

#include "k3lab/core/sha256.hpp"

namespace k3lab::validate::detail {

inline void hash_repository_file(core::Sha256& hasher, std::string_view path, std::string_view content) {
  const char zero = '\0';
  hasher.update(path);
  hasher.update(&zero, 1);
  hasher.update(content);
  hasher.update(&zero, 1);
}

}  // namespace k3lab::validate::detail
