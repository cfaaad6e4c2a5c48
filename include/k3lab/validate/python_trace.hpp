#pragma once
// Tracing a name through a Python repository's explicit imports to the def or class that defines it:
// the static analysis behind the repository family's questions (experiment 1) and the mock reader.
//
// trace(module, name) follows `from M import x [as y]` bindings, one module at a time, and stops at a
// `def` or `class`. It gives up (nullopt) wherever a static reading could be wrong or the object is not
// a definition: a module outside the repository, a name bound more than once or inside a block, a
// module with a star import (it may rebind anything), an assignment or a module object, a cycle.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k3lab/validate/python_module.hpp"

namespace k3lab::validate {

struct TraceStep {
  const PythonModule* module = nullptr;
  const PythonBinding* binding = nullptr;  // the import (every step but the last) or the definition (last)
};

struct DefinitionTrace {
  std::vector<TraceStep> steps;  // the starting module first, the defining module last
  const PythonModule& defining_module() const { return *steps.back().module; }
  const PythonBinding& definition() const { return *steps.back().binding; }
};

class PythonRepository {
 public:
  explicit PythonRepository(std::vector<PythonModule> modules);

  const PythonModule* module(std::string_view dotted_name) const;
  const PythonModule* module_at(std::string_view path) const;
  const std::vector<PythonModule>& modules() const { return modules_; }  // in path order

  std::optional<DefinitionTrace> trace(std::string_view module_name, std::string_view name) const;

  // Every import binding of the repository that traces to a definition, in path and source order.
  struct ImportTrace {
    const PythonModule* importer = nullptr;
    const PythonBinding* import = nullptr;
    DefinitionTrace trace;
  };
  std::vector<ImportTrace> traced_imports() const;

  // Modules other than `except_path` whose only binding of `name` is a def or class, in path order.
  std::vector<const PythonModule*> other_definitions(std::string_view name, std::string_view except_path) const;

 private:
  std::vector<PythonModule> modules_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
  std::map<std::string, std::size_t, std::less<>> by_path_;
};

}  // namespace k3lab::validate
