#pragma once
// Private helpers shared by the page and index renderers: safe file names, whole-file writes, URLs.
#include <filesystem>
#include <string>
#include <string_view>

namespace k3lab::report::detail {

// Throws std::invalid_argument unless `stem` is a safe file name stem: [A-Za-z0-9][A-Za-z0-9._-]*,
// at most 120 characters. `what` names the field in the message (e.g. "table id").
void check_file_stem(std::string_view stem, std::string_view what);

// Writes the whole file through a temporary next to it and a rename, so a reader never sees half of it.
void write_text_file(const std::filesystem::path& path, std::string_view content);

// The whole file; throws std::runtime_error naming the file when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// Percent-encodes a relative path for use in a link (keeps letters, digits, "-._~/").
std::string url_path(std::string_view path);

}  // namespace k3lab::report::detail
