#include "k3lab/validate/python_trace.hpp"

#include <algorithm>
#include <stdexcept>

namespace k3lab::validate {
namespace {

constexpr std::size_t kMaxTraceSteps = 16;

bool is_definition(const PythonBinding& binding) {
  return binding.kind == PythonBinding::Kind::function || binding.kind == PythonBinding::Kind::class_definition;
}

}  // namespace

PythonRepository::PythonRepository(std::vector<PythonModule> modules) : modules_(std::move(modules)) {
  std::sort(modules_.begin(), modules_.end(), [](const PythonModule& a, const PythonModule& b) { return a.path < b.path; });
  for (std::size_t i = 0; i < modules_.size(); ++i) {
    if (!by_path_.emplace(modules_[i].path, i).second) {
      throw std::invalid_argument("PythonRepository: the path " + modules_[i].path + " appears twice");
    }
    // "pkg/mod.py" and "pkg/mod/__init__.py" would both be module pkg.mod; Python imports the package.
    const auto [it, fresh] = by_name_.emplace(modules_[i].name, i);
    if (!fresh && modules_[i].is_package) it->second = i;
  }
}

const PythonModule* PythonRepository::module(std::string_view dotted_name) const {
  const auto it = by_name_.find(dotted_name);
  return it == by_name_.end() ? nullptr : &modules_[it->second];
}

const PythonModule* PythonRepository::module_at(std::string_view path) const {
  const auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : &modules_[it->second];
}

std::optional<DefinitionTrace> PythonRepository::trace(std::string_view module_name, std::string_view name) const {
  DefinitionTrace trace;
  const PythonModule* current = module(module_name);
  std::string wanted(name);
  while (current != nullptr && trace.steps.size() < kMaxTraceSteps) {
    if (current->has_star_import) return std::nullopt;
    const PythonBinding* binding = current->unique_binding(wanted);
    if (binding == nullptr) return std::nullopt;
    for (const TraceStep& step : trace.steps) {
      if (step.module == current) return std::nullopt;  // an import cycle
    }
    trace.steps.push_back({current, binding});
    if (is_definition(*binding)) return trace;
    if (binding->kind != PythonBinding::Kind::import_from) return std::nullopt;
    current = module(binding->source_module);
    wanted = binding->source_name;
  }
  return std::nullopt;
}

std::vector<PythonRepository::ImportTrace> PythonRepository::traced_imports() const {
  std::vector<ImportTrace> out;
  for (const PythonModule& importer : modules_) {
    for (const PythonBinding& binding : importer.bindings) {
      if (binding.kind != PythonBinding::Kind::import_from) continue;
      if (importer.unique_binding(binding.name) != &binding) continue;
      std::optional<DefinitionTrace> trace = this->trace(importer.name, binding.name);
      if (trace) out.push_back({&importer, &binding, std::move(*trace)});
    }
  }
  return out;
}

std::vector<const PythonModule*> PythonRepository::other_definitions(std::string_view name,
                                                                     std::string_view except_path) const {
  std::vector<const PythonModule*> out;
  for (const PythonModule& module : modules_) {
    if (module.path == except_path) continue;
    const PythonBinding* binding = module.unique_binding(name);
    if (binding != nullptr && is_definition(*binding)) out.push_back(&module);
  }
  return out;
}

}  // namespace k3lab::validate
