#pragma once
// Whole-file writes that never leave a half-written file: write a temporary, fsync, rename.
#include <filesystem>
#include <string_view>

namespace k3lab::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace k3lab::core
