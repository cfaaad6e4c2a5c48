#include "k3lab/validate/python_trace.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace k3lab::validate {
namespace {

// A small repository with a re-export chain, an alias, a cycle and the cases a static reading must
// refuse (star import, conditional binding, a module outside the repository, a constant).
PythonRepository tiny_repository() {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", "from .api import Widget, make as build\nfrom .cyc import loop\n"},
      {"pkg/api.py", "from .impl.widgets import Widget\nfrom .impl.factory import make\n"},
      {"pkg/impl/__init__.py", ""},
      {"pkg/impl/widgets.py", "class Widget:\n    pass\n"},
      {"pkg/impl/factory.py", "def make(kind, size=1, *parts, **options):\n    return kind\n"},
      {"pkg/cyc.py", "from .cyc2 import loop\n"},
      {"pkg/cyc2.py", "from .cyc import loop\n"},
      {"pkg/starred.py", "from .api import *\nfrom .impl.widgets import Widget\n"},
      {"pkg/cond.py", "try:\n    from .impl.widgets import Widget\nexcept ImportError:\n    Widget = None\n"},
      {"pkg/external.py", "from numpy import array\n"},
      {"pkg/value.py", "from .consts import LIMIT\n"},
      {"pkg/consts.py", "LIMIT = 3\n"},
      {"other/widgets.py", "class Widget:\n    pass\n"},
  };
  std::vector<PythonModule> modules;
  for (const auto& [path, text] : files) modules.push_back(analyze_python_module(path, text));
  return PythonRepository(std::move(modules));
}

std::vector<std::string> paths(const DefinitionTrace& trace) {
  std::vector<std::string> out;
  for (const auto& step : trace.steps) out.push_back(step.module->path);
  return out;
}

TEST(PythonTrace, FollowsReExportsAndAliasesToTheDefinition) {
  const PythonRepository repo = tiny_repository();
  const auto widget = repo.trace("pkg", "Widget");
  ASSERT_TRUE(widget);
  EXPECT_EQ(paths(*widget), (std::vector<std::string>{"pkg/__init__.py", "pkg/api.py", "pkg/impl/widgets.py"}));
  EXPECT_EQ(widget->definition().kind, PythonBinding::Kind::class_definition);
  const auto build = repo.trace("pkg", "build");
  ASSERT_TRUE(build);
  EXPECT_EQ(paths(*build), (std::vector<std::string>{"pkg/__init__.py", "pkg/api.py", "pkg/impl/factory.py"}));
  EXPECT_EQ(build->definition().name, "make");
  EXPECT_EQ(build->definition().parameters.size(), 4u);
}

TEST(PythonTrace, RefusesWhatAStaticReadingCannotSettle) {
  const PythonRepository repo = tiny_repository();
  EXPECT_FALSE(repo.trace("pkg", "loop")) << "an import cycle";
  EXPECT_FALSE(repo.trace("pkg.starred", "Widget")) << "a star import may rebind it";
  EXPECT_FALSE(repo.trace("pkg.cond", "Widget")) << "bound in a try block and again in its handler";
  EXPECT_FALSE(repo.trace("pkg.external", "array")) << "outside the repository";
  EXPECT_FALSE(repo.trace("pkg.value", "LIMIT")) << "a constant, not a def or class";
  EXPECT_FALSE(repo.trace("pkg.missing", "x"));
}

TEST(PythonTrace, ListsEveryTracedImportAndOtherDefinitions) {
  const PythonRepository repo = tiny_repository();
  std::vector<std::pair<std::string, std::string>> traced;
  for (const auto& t : repo.traced_imports()) traced.emplace_back(t.importer->path, t.import->name);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"pkg/__init__.py", "Widget"}, {"pkg/__init__.py", "build"}, {"pkg/api.py", "Widget"}, {"pkg/api.py", "make"}};
  EXPECT_EQ(traced, expected);
  const auto others = repo.other_definitions("Widget", "pkg/impl/widgets.py");
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0]->path, "other/widgets.py");
}

}  // namespace
}  // namespace k3lab::validate
