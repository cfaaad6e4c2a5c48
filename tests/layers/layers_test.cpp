// The dependency rules of docs/architecture.md, checked on the source tree: torch-free layers include no
// LibTorch header (directly or through our own headers), no module includes another module's internals,
// nothing outside a module includes them, the kernels include nothing of ours but their own headers,
// and core includes nothing above it. A violation names the include chain that breaks the rule.
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace k3lab::layers_test {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = K3LAB_SOURCE_DIR;

struct Include {
  std::string target;  // as written between the quotes or brackets
  bool angled = false;
};

std::vector<Include> includes_of(const fs::path& file) {
  static const std::regex pattern(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> found;
  std::ifstream in(file);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, pattern)) found.push_back({m[2].str(), m[1].str() == "<"});
  }
  return found;
}

bool is_source(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h";
}

std::vector<fs::path> sources_under(const fs::path& folder) {
  std::vector<fs::path> files;
  if (!fs::exists(kRoot / folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / folder)) {
    if (entry.is_regular_file() && is_source(entry.path())) files.push_back(fs::relative(entry.path(), kRoot));
  }
  return files;
}

// The experiment modules: folders of src/experiments with a CMakeLists.txt, less the shared layers.
std::set<std::string> module_names() {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kRoot / "src/experiments")) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory() && fs::exists(entry.path() / "CMakeLists.txt") && name != "training" && name != "registry") {
      names.insert(name);
    }
  }
  return names;
}

// Where a quoted include of ours lives, or nullopt for a system or generated header.
std::optional<fs::path> resolve(const fs::path& from, const std::string& target) {
  for (const fs::path& candidate : {fs::path("include") / target, fs::path("src/experiments") / target, fs::path("src") / target,
                                   from.parent_path() / target}) {
    if (fs::exists(kRoot / candidate)) return candidate.lexically_normal();
  }
  return std::nullopt;
}

bool is_torch_header(const std::string& target) {
  for (const char* prefix : {"torch/", "ATen/", "c10/", "caffe2/", "c10d/"}) {
    if (target.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The chain of includes from `file` to a LibTorch header, empty when there is none.
std::vector<std::string> torch_chain(const fs::path& file, std::map<fs::path, std::vector<std::string>>& memo,
                                     std::set<fs::path>& visiting) {
  if (auto it = memo.find(file); it != memo.end()) return it->second;
  if (!visiting.insert(file).second) return {};
  std::vector<std::string> chain;
  for (const auto& inc : includes_of(kRoot / file)) {
    if (is_torch_header(inc.target)) {
      chain = {file.string(), "<" + inc.target + ">"};
      break;
    }
    if (inc.angled) continue;
    const auto next = resolve(file, inc.target);
    if (!next) continue;
    auto rest = torch_chain(*next, memo, visiting);
    if (!rest.empty()) {
      chain = {file.string()};
      chain.insert(chain.end(), rest.begin(), rest.end());
      break;
    }
  }
  visiting.erase(file);
  memo[file] = chain;
  return chain;
}

std::string joined(const std::vector<std::string>& chain) {
  std::string text;
  for (const auto& step : chain) text += (text.empty() ? "" : " -> ") + step;
  return text;
}

// Folders whose targets link no LibTorch (their CMakeLists say so); keep them that way.
const std::vector<std::string> kTorchFree = {
    "src/core", "include/k3lab/core", "src/report", "include/k3lab/report", "src/sim", "include/k3lab/sim",
    "src/validate", "include/k3lab/validate", "src/api", "include/k3lab/api", "src/mock", "include/k3lab/mock",
    "src/exec", "include/k3lab/exec", "src/experiments/registry", "src/experiments/context_probe",
    "src/experiments/agent_replay", "src/experiments/memory_pool"};

// The spine: the files directly in src/experiments and include/k3lab/experiments (not training/).
std::vector<fs::path> spine_files() {
  std::vector<fs::path> files;
  for (const char* folder : {"src/experiments", "include/k3lab/experiments"}) {
    for (const auto& entry : fs::directory_iterator(kRoot / folder)) {
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(fs::relative(entry.path(), kRoot));
    }
  }
  return files;
}

// The sources of a torch-free library that shares its folder with LibTorch code (k3lab_train_data in
// src/train), read from its add_library() in the folder's CMakeLists.txt, with their public headers.
std::vector<fs::path> torch_free_target_files(const fs::path& folder, const std::string& target) {
  std::ifstream in(kRoot / folder / "CMakeLists.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto start = text.find("add_library(" + target + " ");
  std::vector<fs::path> files;
  if (start == std::string::npos) return files;
  const std::string block = text.substr(start, text.find(')', start) - start);
  static const std::regex source(R"(([A-Za-z0-9_]+)\.cpp)");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), source); it != std::sregex_iterator(); ++it) {
    const std::string stem = (*it)[1].str();
    if (fs::exists(kRoot / folder / (stem + ".cpp"))) files.push_back(folder / (stem + ".cpp"));
    const auto header = fs::path("include/k3lab") / folder.filename() / (stem + ".hpp");
    if (fs::exists(kRoot / header)) files.push_back(header);
  }
  return files;
}

TEST(Layers, TorchFreeLayersIncludeNoLibTorchHeader) {
  std::vector<fs::path> files = spine_files();
  for (const auto& folder : kTorchFree) {
    const auto more = sources_under(folder);
    files.insert(files.end(), more.begin(), more.end());
  }
  const auto data = torch_free_target_files("src/train", "k3lab_train_data");
  EXPECT_GE(data.size(), 8u) << "k3lab_train_data's sources were not found in src/train/CMakeLists.txt";
  files.insert(files.end(), data.begin(), data.end());
  ASSERT_GT(files.size(), 100u) << "the source tree was not found under " << kRoot;
  std::map<fs::path, std::vector<std::string>> memo;
  for (const auto& file : files) {
    std::set<fs::path> visiting;
    const auto chain = torch_chain(file, memo, visiting);
    EXPECT_TRUE(chain.empty()) << file.string() << " is in a torch-free layer but reaches LibTorch: " << joined(chain);
  }
}

// Which module's internals an include names ("situ_qat/units.hpp" -> situ_qat), if any.
std::optional<std::string> module_of(const std::string& target, const std::set<std::string>& modules) {
  const auto slash = target.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const auto head = target.substr(0, slash);
  if (modules.count(head)) return head;
  return std::nullopt;
}

TEST(Layers, ModuleInternalsStayInsideTheirModule) {
  const auto modules = module_names();
  ASSERT_GE(modules.size(), 8u);
  for (const char* root : {"src", "include", "tests"}) {
    for (const auto& file : sources_under(root)) {
      const auto parts = std::vector<fs::path>(file.begin(), file.end());
      // src/experiments/<m>/... and tests/<m>/... belong to module m.
      std::optional<std::string> owner;
      if (parts.size() > 2 && parts[0] == "src" && parts[1] == "experiments") owner = parts[2].string();
      if (parts.size() > 1 && parts[0] == "tests") owner = parts[1].string();
      for (const auto& inc : includes_of(kRoot / file)) {
        if (inc.angled) continue;
        const auto used = module_of(inc.target, modules);
        if (!used) continue;
        // The planning tests read every module's planning half (typed parameters and units): the one
        // declared cross-module test folder.
        if (owner == "experiments_plan" && (inc.target.find("/parameters.hpp") != std::string::npos ||
                                            inc.target.find("/units.hpp") != std::string::npos)) {
          continue;
        }
        EXPECT_EQ(owner.value_or(""), *used) << file.string() << " includes \"" << inc.target << "\", an internal "
                                             << "header of module " << *used << ": share it through a layer below";
      }
    }
  }
}

TEST(Layers, KernelsIncludeNothingOfOursButTheirOwnHeaders) {
  for (const char* root : {"src/kernels", "include/k3lab/kernels"}) {
    for (const auto& file : sources_under(root)) {
      for (const auto& inc : includes_of(kRoot / file)) {
        if (inc.angled || inc.target.rfind("k3lab/", 0) != 0) continue;
        EXPECT_EQ(inc.target.rfind("k3lab/kernels/", 0), 0u)
            << file.string() << " includes \"" << inc.target << "\": kernels stay below the models they serve";
      }
    }
  }
}

TEST(Layers, CoreIncludesNothingAboveIt) {
  for (const char* root : {"src/core", "include/k3lab/core"}) {
    for (const auto& file : sources_under(root)) {
      for (const auto& inc : includes_of(kRoot / file)) {
        // The generated build facts (cmake/Provenance.cmake, cmake/AnalysisInfo.cmake) are not a layer.
        if (inc.angled || inc.target.rfind("k3lab/", 0) != 0 || inc.target == "k3lab/build_info.hpp" ||
            inc.target == "k3lab/analysis_info.hpp") {
          continue;
        }
        EXPECT_EQ(inc.target.rfind("k3lab/core/", 0), 0u)
            << file.string() << " includes \"" << inc.target << "\": core knows no experiment, HTTP or tensor";
      }
    }
  }
}

TEST(Layers, TheRegistryIsTheOnlyPlaceThatNamesEveryModule) {
  // A module factory is declared in its own folder and named by the registry; nothing else calls one.
  const std::regex factory(R"((\w+)::make_experiment\(\))");
  const auto modules = module_names();
  for (const char* root : {"src", "include"}) {
    for (const auto& file : sources_under(root)) {
      if (file.string().rfind("src/experiments/registry/", 0) == 0) continue;
      std::ifstream in(kRoot / file);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), factory); it != std::sregex_iterator(); ++it) {
        const auto name = (*it)[1].str();
        if (!modules.count(name)) continue;
        EXPECT_EQ(file.string().rfind("src/experiments/" + name + "/", 0), 0u)
            << file.string() << " calls " << name << "::make_experiment(): go through the registry";
      }
    }
  }
}

}  // namespace
}  // namespace k3lab::layers_test
