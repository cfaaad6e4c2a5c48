#include "k3lab/validate/python_module.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"

namespace k3lab::validate {
namespace {

using Kind = PythonBinding::Kind;

const PythonBinding& only(const PythonModule& m, const std::string& name) {
  const PythonBinding* b = m.unique_binding(name);
  if (b == nullptr) throw std::runtime_error("no unique binding of " + name);
  return *b;
}

TEST(PythonModule, ModuleNamesFollowThePackageLayout) {
  EXPECT_EQ(python_module_name("sympy/core/numbers.py"), "sympy.core.numbers");
  EXPECT_EQ(python_module_name("sympy/core/__init__.py"), "sympy.core");
  EXPECT_THROW(python_module_name("sympy/core/README"), std::invalid_argument);
}

TEST(PythonModule, ReadsImportsWithAliasesParenthesesAndRelativeLevels) {
  const PythonModule m = analyze_python_module("pkg/sub/mod.py",
                                               "from .sibling import (alpha,\n"
                                               "    beta as b,  # a comment, with a comma\n"
                                               "    gamma)\n"
                                               "from ..top import delta as d\n"
                                               "from . import helpers\n"
                                               "from os.path import join\n"
                                               "import collections.abc as cabc, json\n"
                                               "import xml.dom\n");
  EXPECT_EQ(only(m, "alpha").source_module, "pkg.sub.sibling");
  EXPECT_EQ(only(m, "b").source_name, "beta");
  EXPECT_EQ(only(m, "gamma").line, 1u);
  EXPECT_EQ(only(m, "d").source_module, "pkg.top");
  EXPECT_EQ(only(m, "d").line, 4u);
  EXPECT_EQ(only(m, "helpers").source_module, "pkg.sub");
  EXPECT_EQ(only(m, "join").source_module, "os.path");
  EXPECT_EQ(only(m, "cabc").kind, Kind::import_module);
  EXPECT_EQ(only(m, "cabc").source_module, "collections.abc");
  EXPECT_EQ(only(m, "json").kind, Kind::import_module);
  EXPECT_EQ(only(m, "xml").source_module, "xml.dom");
  EXPECT_FALSE(m.has_star_import);
  // In a package's __init__, "." is the package itself.
  const PythonModule init = analyze_python_module("pkg/sub/__init__.py", "from .mod import alpha\n");
  EXPECT_TRUE(init.is_package);
  EXPECT_EQ(only(init, "alpha").source_module, "pkg.sub.mod");
}

TEST(PythonModule, StringsCommentsAndBodiesHideWhatLooksLikeStatements) {
  const PythonModule m = analyze_python_module("m.py",
                                               "\"\"\"Docs.\n"
                                               "def not_a_function():\n"
                                               "from fake import thing\n"
                                               "\"\"\"\n"
                                               "x = 'a = b' + \"#\"  # y = 2\n"
                                               "@decorator(option=1)\n"
                                               "def real(self, a, b=(1, 2), *args, c: 'T' = {'k': 3}, **kw) -> int:\n"
                                               "    inner = 1\n"
                                               "    def nested(): pass\n"
                                               "class Thing(Base, metaclass=Meta):\n"
                                               "    attribute = 2\n"
                                               "    def method(self): return r'''\n"
                                               "top_level = 3\n"
                                               "'''\n"
                                               "async def fetch(url, /, *, timeout=5): pass\n"
                                               "a, (b, *c) = d = f()\n"
                                               "total += 1; count: int = 0; bare: int\n"
                                               "del removed\n"
                                               "obj.attr = 1\n"
                                               "if x == 1 or x >= 2: pass\n");
  std::vector<std::string> names;
  for (const auto& b : m.bindings) names.push_back(b.name);
  const std::vector<std::string> expected = {"x", "real", "Thing", "fetch", "a", "b", "c", "d", "total", "count", "removed"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(only(m, "real").line, 7u);
  EXPECT_EQ(only(m, "real").parameters, (std::vector<std::string>{"self", "a", "b", "*args", "c", "**kw"}));
  EXPECT_EQ(only(m, "fetch").parameters, (std::vector<std::string>{"url", "timeout"}));
  EXPECT_EQ(only(m, "Thing").kind, Kind::class_definition);
  EXPECT_EQ(only(m, "removed").kind, Kind::deletion);
}

TEST(PythonModule, BlocksAtModuleLevelBindConditionally) {
  const PythonModule m = analyze_python_module("m.py",
                                               "try:\n"
                                               "    from fast import speed\n"
                                               "except ImportError as error:\n"
                                               "    def speed(x):\n"
                                               "        local = x\n"
                                               "        return local\n"
                                               "if FLAG: flagged = 1\n"
                                               "for item in range(3):\n"
                                               "    pass\n"
                                               "with open('f') as handle:\n"
                                               "    pass\n"
                                               "from star import *\n"
                                               "plain = 1\n"
                                               "twice = 1\n"
                                               "twice = 2\n");
  EXPECT_EQ(m.unique_binding("speed"), nullptr);  // bound twice, both conditionally
  EXPECT_EQ(m.unique_binding("flagged"), nullptr);
  EXPECT_EQ(m.unique_binding("local"), nullptr);  // a function's local is no module binding
  for (const auto& b : m.bindings) EXPECT_NE(b.name, "local");
  for (const char* name : {"error", "item", "handle"}) {
    bool conditional = false;
    for (const auto& b : m.bindings) conditional = conditional || (b.name == name && b.conditional);
    EXPECT_TRUE(conditional) << name;
  }
  EXPECT_TRUE(m.has_star_import);
  EXPECT_NE(m.unique_binding("plain"), nullptr);
  EXPECT_EQ(m.unique_binding("twice"), nullptr);
}

// Python's own parser (tests/validate/data/python_bindings.py) is the reference: every module-level
// binding of every pinned file, with its kind, line, source, parameters and condition, must agree.
TEST(PythonModule, AgreesWithPythonsParserOnEveryPinnedFile) {
  const std::filesystem::path source(K3LAB_SOURCE_DIR);
  const std::filesystem::path list = source / "experiments/repositories/python3-sympy_1.11.1-1.sha256";
  const std::filesystem::path root = "/usr/lib/python3/dist-packages";
  if (!std::filesystem::exists(root / "sympy/__init__.py")) {
    GTEST_SKIP() << "python3-sympy is not installed (scripts/setup.sh installs it)";
  }
  std::vector<std::string> paths;
  std::ifstream in(list);
  std::string hash, path;
  while (in >> hash >> path) paths.push_back(path);
  ASSERT_EQ(paths.size(), 815u);
  k3lab::testing::TempDir dir("k3lab-python-reference");
  std::ofstream(dir / "paths.txt") << [&] {
    std::string all;
    for (const auto& p : paths) all += p + "\n";
    return all;
  }();
  const std::string command = "python3 " + (source / "tests/validate/data/python_bindings.py").string() + " " +
                              root.string() + " < " + (dir / "paths.txt").string();
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[65536];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << "the reference script failed: " << command;
  std::istringstream lines(output);
  std::string line;
  std::size_t files = 0, bindings = 0;
  const char* kinds[] = {"import_from", "import_module", "function", "class", "assignment", "deletion"};
  while (std::getline(lines, line)) {
    const auto reference = nlohmann::json::parse(line);
    const std::string file = reference.at("path");
    std::ifstream f(root / file, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    const PythonModule ours = analyze_python_module(file, text.str());
    nlohmann::json mine = nlohmann::json::array();
    for (const auto& b : ours.bindings)
      mine.push_back({b.name, kinds[static_cast<int>(b.kind)], b.line, b.source_module, b.source_name, b.parameters,
                      b.conditional});
    EXPECT_EQ(ours.has_star_import, reference.at("star").get<bool>()) << file;
    EXPECT_EQ(mine, reference.at("bindings")) << file;
    ++files;
    bindings += reference.at("bindings").size();
  }
  EXPECT_EQ(files, paths.size());
  EXPECT_GT(bindings, 30000u);
}

}  // namespace
}  // namespace k3lab::validate
