#include "detail/code_generator.hpp"

#include <vector>

#include "detail/text.hpp"

namespace k3lab::validate::detail {
namespace {

const std::vector<std::string_view> kPackages = {"harbor", "orchard", "lantern", "meadow", "workshop", "compass",
                                                 "market", "kiln",    "loom",    "garden", "bridge",   "mill"};

}  // namespace

bool is_filler_package_name(std::string_view name) {
  if (name == "notes") return true;
  for (std::string_view package : kPackages) {
    if (package == name) return true;
  }
  return false;
}

std::string file_section_body(std::string_view path, std::string_view content) {
  std::string body = "FILE: ";
  body += path;
  body += '\n';
  body += content;
  return body;
}

std::string CodeGenerator::unique_path(std::string path_stem) {
  std::string path = path_stem + ".py";
  for (int suffix = 2; used_paths_.count(path) != 0; ++suffix) {
    path = path_stem + "_" + std::to_string(suffix) + ".py";
  }
  used_paths_.insert(path);
  return path;
}

void CodeGenerator::append_function(std::string& out) {
  core::Rng& rng = prose_.rng();
  const std::string_view verb = pick(rng, prose_base_verbs());
  const std::string_view noun = pick(rng, prose_nouns());
  const std::string_view other = pick(rng, prose_nouns());
  const std::string_view adj = pick(rng, prose_adjectives());
  const std::string doc = prose_.sentence();
  auto s = [&](std::string_view text) { out += text; };
  switch (rng.below(4)) {
    case 0:
      s("def "); s(verb); s("_"); s(noun); s("s(items):\n");
      s("    \"\"\""); s(doc); s("\"\"\"\n");
      s("    kept = [item for item in items if item."); s(adj); s("]\n");
      s("    return sorted(kept, key=lambda item: item."); s(other); s(")\n");
      break;
    case 1:
      s("def "); s(verb); s("_"); s(noun); s("(record, "); s(other); s("):\n");
      s("    \"\"\""); s(doc); s("\"\"\"\n");
      s("    if record."); s(adj); s(" is None:\n");
      s("        return "); s(other); s("\n");
      s("    return record."); s(adj); s("\n");
      break;
    case 2:
      s("def "); s(verb); s("_"); s(noun); s("_map(entries):\n");
      s("    \"\"\""); s(doc); s("\"\"\"\n");
      s("    result = {}\n");
      s("    for entry in entries:\n");
      s("        result[entry."); s(noun); s("] = entry."); s(other); s("\n");
      s("    return result\n");
      break;
    default:
      s("class "); s(capitalize(adj)); s(capitalize(noun)); s(":\n");
      s("    \"\"\""); s(doc); s("\"\"\"\n\n");
      s("    def __init__(self, "); s(other); s("):\n");
      s("        self."); s(other); s(" = "); s(other); s("\n\n");
      s("    def describe(self):\n");
      s("        return \""); s(adj); s(" \" + str(self."); s(other); s(")\n");
      break;
  }
}

SourceFile CodeGenerator::next_file() {
  core::Rng& rng = prose_.rng();
  std::string stem = "src/";
  stem += pick(rng, kPackages);
  stem += '/';
  stem += pick(rng, prose_adjectives());
  stem += '_';
  stem += pick(rng, prose_nouns());
  SourceFile file;
  file.path = unique_path(std::move(stem));
  file.content = "\"\"\"" + prose_.sentence() + "\"\"\"\n";
  const int functions = 2 + static_cast<int>(rng.below(4));
  for (int i = 0; i < functions; ++i) {
    file.content += "\n\n";
    append_function(file.content);
  }
  return file;
}

}  // namespace k3lab::validate::detail
