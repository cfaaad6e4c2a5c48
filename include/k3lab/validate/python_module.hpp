#pragma once
// What a Python module binds at its top level, read by a small static analysis (nothing is executed).
// It serves the repository family of experiment 1: questions about a pinned real repository are
// derived from these bindings (python_trace.hpp), and the mock reader answers from the same tables.
//
// Read: logical lines (parentheses, brackets, braces and backslashes join physical lines; comments
// and string literals, triple-quoted ones included, are blanked), then every statement at column 0:
// `from M import a as b, c`, `import a.b as c`, `def`/`async def` (with its parameter names),
// `class`, assignments (`x = ...`, `x: T = ...`, `a, b = ...`, `x += ...`) and `del`. Statements
// inside a top-level `if`/`try`/`for`/`while`/`with` block are module-level too; they are recorded
// as conditional, because a reader cannot tell statically whether they ran. Function and class
// bodies are skipped.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate {

struct PythonBinding {
  enum class Kind { import_from, import_module, function, class_definition, assignment, deletion };
  std::string name;  // the name bound in the module's namespace
  Kind kind = Kind::assignment;
  std::size_t line = 0;  // 1-based line where the statement starts
  // import_from: the absolute module ("sympy.core.numbers"; relative imports resolved) and the imported
  // name; import_module: the imported module in source_module.
  std::string source_module;
  std::string source_name;
  std::vector<std::string> parameters;  // function: names in order, with their stars ("self", "*args", "**kw")
  bool conditional = false;             // inside a top-level if/try/for/while/with block
};

struct PythonModule {
  std::string path;  // "sympy/core/numbers.py"
  std::string name;  // "sympy.core.numbers"; "sympy.core" for sympy/core/__init__.py
  bool is_package = false;
  bool has_star_import = false;  // `from M import *` anywhere at module level
  std::vector<PythonBinding> bindings;  // in source order

  // The only binding of `name`, or nullptr when the module binds it never, more than once, or only
  // conditionally: then no static reading can say which object the name holds.
  const PythonBinding* unique_binding(std::string_view name) const;
};

// "sympy/core/numbers.py" -> "sympy.core.numbers", "sympy/core/__init__.py" -> "sympy.core".
// Throws std::invalid_argument for a path that does not end in ".py".
std::string python_module_name(std::string_view path);

PythonModule analyze_python_module(std::string path, std::string_view source);

}  // namespace k3lab::validate
