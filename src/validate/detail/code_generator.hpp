#pragma once
// The synthetic pseudo-repository used by the repository family (license: ours, MIT).
//
// Files are small Python-like modules built from our word lists: functions that filter, map and
// describe records, with docstrings from the prose generator. They contain no integer literals, no
// imports and no module-level constants, so they never interfere with the traced definitions.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "detail/prose_generator.hpp"

namespace k3lab::validate::detail {

inline constexpr std::string_view kPseudoRepoGeneratorName = "k3lab-pseudo-repo";
inline constexpr int kPseudoRepoGeneratorVersion = 1;

struct SourceFile {
  std::string path;
  std::string content;  // ends with '\n'
};

// True for directory names the filler generator uses under src/ (the traced chain must avoid them).
bool is_filler_package_name(std::string_view name);

// "FILE: <path>\n<content>": how a file appears as a document section.
std::string file_section_body(std::string_view path, std::string_view content);

class CodeGenerator {
 public:
  explicit CodeGenerator(std::uint64_t seed) : prose_(seed) {}

  // Paths that generated files must never take (the traced files, pinned snapshot files).
  void reserve_path(const std::string& path) { used_paths_.insert(path); }
  SourceFile next_file();

 private:
  std::string unique_path(std::string path_stem);
  void append_function(std::string& out);

  ProseGenerator prose_;
  std::set<std::string> used_paths_;
};

}  // namespace k3lab::validate::detail
