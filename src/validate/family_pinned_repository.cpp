// Family 5 on a pinned real repository: a name that one module imports is traced through the
// repository's explicit imports to the def or class that defines it (python_trace.hpp). Three question
// kinds, by fixture index: 0, 3, 6 ask where a re-exported name is defined (a chain of at least three
// files); 2, 5 ask where a name imported under an alias is defined; 1, 4, 7 ask how many parameters the
// traced function declares. Decoys are real neighbouring definitions: another module defining the same
// name, and a module beside the defining one.
#include <algorithm>
#include <set>

#include "detail/code_generator.hpp"
#include "detail/family_content.hpp"
#include "detail/text.hpp"
#include "k3lab/validate/placement_rule.hpp"
#include "k3lab/validate/prompt_format.hpp"

namespace k3lab::validate::detail {
namespace {

enum class QuestionKind { reexport_chain, parameter_count, alias };

QuestionKind kind_for(int index) {
  if (index % 3 == 0) return QuestionKind::reexport_chain;
  if (index % 3 == 1) return QuestionKind::parameter_count;
  return QuestionKind::alias;
}

std::size_t file_bytes(const RepositorySnapshot& snapshot, const std::string& path) {
  const auto it = std::lower_bound(snapshot.files.begin(), snapshot.files.end(), path,
                                   [](const SnapshotFile& f, const std::string& p) { return f.path < p; });
  return it != snapshot.files.end() && it->path == path ? it->content.size() : 0;
}

const std::string& file_content(const RepositorySnapshot& snapshot, const std::string& path) {
  return std::lower_bound(snapshot.files.begin(), snapshot.files.end(), path,
                          [](const SnapshotFile& f, const std::string& p) { return f.path < p; })
      ->content;
}

std::size_t trace_bytes(const RepositorySnapshot& snapshot, const DefinitionTrace& trace) {
  std::size_t bytes = 0;
  for (const TraceStep& step : trace.steps) bytes += file_bytes(snapshot, step.module->path);
  return bytes;
}

bool fits_kind(const PythonRepository::ImportTrace& t, QuestionKind kind) {
  switch (kind) {
    case QuestionKind::reexport_chain:
      return t.trace.steps.size() >= 3;
    case QuestionKind::parameter_count:
      return t.trace.definition().kind == PythonBinding::Kind::function && !t.trace.definition().parameters.empty();
    case QuestionKind::alias:
      return t.import->name != t.import->source_name;
  }
  return false;
}

// The traced imports a question of this kind can use (every file on the chain fits the evidence
// budget); all traced imports that fit when the repository has none of the kind.
std::vector<const PythonRepository::ImportTrace*> question_pool(const RepositorySnapshot& snapshot, QuestionKind kind) {
  std::vector<const PythonRepository::ImportTrace*> fitting;
  std::vector<const PythonRepository::ImportTrace*> of_kind;
  for (const auto& t : snapshot.traced_imports) {
    if (trace_bytes(snapshot, t.trace) > kMaxTracedRepositoryBytes) continue;
    fitting.push_back(&t);
    if (fits_kind(t, kind)) of_kind.push_back(&t);
  }
  if (fitting.empty()) {
    throw std::invalid_argument("repository family: no import in the pinned repository traces to a definition "
                                "through files totalling at most " + std::to_string(kMaxTracedRepositoryBytes) +
                                " bytes; pin a repository with smaller modules");
  }
  return of_kind.empty() ? fitting : of_kind;
}

struct Decoy {
  const PythonModule* module = nullptr;
  std::string label;
};

// Another module defining the same name, then the nearest module beside the defining one (path order,
// same folder) that defines something; each small enough for the smallest budget.
std::vector<Decoy> choose_decoys(const RepositorySnapshot& snapshot, const DefinitionTrace& trace, core::Rng& rng) {
  std::set<std::string> used;
  for (const TraceStep& step : trace.steps) used.insert(step.module->path);
  const auto small = [&](const PythonModule* m) {
    return used.count(m->path) == 0 && file_bytes(snapshot, m->path) <= kMaxRepositoryDecoyBytes;
  };
  std::vector<Decoy> decoys;
  std::vector<const PythonModule*> same_name;
  for (const PythonModule* m : snapshot.python->other_definitions(trace.definition().name, trace.defining_module().path))
    if (small(m)) same_name.push_back(m);
  if (!same_name.empty()) {
    decoys.push_back({same_name[rng.below(same_name.size())], "decoy: " + trace.definition().name +
                                                                  " defined in another module"});
    used.insert(decoys.back().module->path);
  }
  const std::string& defining = trace.defining_module().path;
  const std::string folder = defining.substr(0, defining.rfind('/') + 1);
  const auto& modules = snapshot.python->modules();
  const auto at = std::find_if(modules.begin(), modules.end(), [&](const PythonModule& m) { return m.path == defining; });
  const std::size_t start = static_cast<std::size_t>(at - modules.begin());
  for (std::size_t step = 1; step < modules.size(); ++step) {
    const PythonModule& m = modules[(start + step) % modules.size()];
    const bool beside = m.path.compare(0, folder.size(), folder) == 0 && m.path.find('/', folder.size()) == std::string::npos;
    const bool defines = std::any_of(m.bindings.begin(), m.bindings.end(), [](const PythonBinding& b) {
      return b.kind == PythonBinding::Kind::function || b.kind == PythonBinding::Kind::class_definition;
    });
    if (beside && defines && small(&m)) {
      decoys.push_back({&m, "decoy: neighbouring module of " + defining});
      break;
    }
  }
  return decoys;
}

std::string binding_summary(const TraceStep& step) {
  const PythonBinding& b = *step.binding;
  const std::string at = " (" + step.module->path + ", line " + std::to_string(b.line) + ")";
  if (b.kind == PythonBinding::Kind::import_from) {
    return at + " binds " + b.name + " with `from " + b.source_module + " import " + b.source_name +
           (b.name != b.source_name ? " as " + b.name : std::string()) + "`";
  }
  std::string what = b.kind == PythonBinding::Kind::class_definition ? "class " : "def ";
  what += b.name;
  if (b.kind == PythonBinding::Kind::function) what += "(" + join(b.parameters, ", ") + ")";
  return at + " defines `" + what + "`";
}

}  // namespace

FamilyContent build_pinned_repository(core::Rng& rng, int index, const RepositorySnapshot& snapshot) {
  const QuestionKind kind = kind_for(index);
  const auto pool = question_pool(snapshot, kind);
  const PythonRepository::ImportTrace& chosen = *pool[rng.below(pool.size())];
  const DefinitionTrace& trace = chosen.trace;
  const std::vector<Decoy> decoys = choose_decoys(snapshot, trace, rng);

  FamilyContent content;
  content.code_filler = true;
  const int hops = static_cast<int>(trace.steps.size());
  const std::vector<double> slots = required_depths(FixtureFamily::repository, index, hops);
  for (int k = 0; k < hops; ++k) {
    const TraceStep& step = trace.steps[static_cast<std::size_t>(k)];
    const double depth = slots[static_cast<std::size_t>((k + index) % hops)];
    content.evidence.push_back({file_section_body(step.module->path, file_content(snapshot, step.module->path)), true,
                                depth, "file " + std::to_string(k + 1) + " of " + std::to_string(hops) + " on the import path"});
    content.reserved_paths.push_back(step.module->path);
  }
  const std::vector<double> decoy_depths = distractor_depths(FixtureFamily::repository, static_cast<int>(decoys.size()));
  for (std::size_t d = 0; d < decoys.size(); ++d) {
    content.evidence.push_back({file_section_body(decoys[d].module->path, file_content(snapshot, decoys[d].module->path)),
                                false, decoy_depths[d], decoys[d].label});
    content.reserved_paths.push_back(decoys[d].module->path);
  }

  const std::string& importer = chosen.importer->path;
  const std::string& name = chosen.import->name;
  const PythonBinding& definition = trace.definition();
  content.question = std::string(kRepositoryQuestionLead) + importer + std::string(kRepositoryQuestionImports) + name + ". ";
  const bool count_parameters = kind == QuestionKind::parameter_count && fits_kind(chosen, kind);
  if (count_parameters) {
    content.question += kParameterCountQuestion;
    content.expected_answer = std::to_string(definition.parameters.size());
  } else {
    content.question += kDefinitionSiteQuestion;
    content.expected_answer = trace.defining_module().path + ":" + definition.name;
  }
  std::string derivation;
  for (std::size_t k = 0; k < trace.steps.size(); ++k)
    derivation += (k == 0 ? "Section " : "; ") + evidence_ref(k) + binding_summary(trace.steps[k]);
  derivation += ". So the answer is " + content.expected_answer + ".";
  for (std::size_t d = 0; d < decoys.size(); ++d) {
    derivation += " " + evidence_ref(trace.steps.size() + d) + " (" + decoys[d].module->path + ") is a " +
                  decoys[d].label.substr(7) + ", not on the import path.";
  }
  content.derivation = std::move(derivation);
  nlohmann::json path = nlohmann::json::array();
  for (const TraceStep& step : trace.steps)
    path.push_back({{"file", step.module->path}, {"line", step.binding->line}, {"name", step.binding->name}});
  nlohmann::json decoy_paths = nlohmann::json::array();
  for (const Decoy& d : decoys) decoy_paths.push_back(d.module->path);
  content.details = {{"question", count_parameters ? "parameter count" : "definition site"},
                     {"import_kind", chosen.import->name != chosen.import->source_name ? "alias"
                                     : trace.steps.size() >= 3                         ? "re-export chain"
                                                                                       : "direct import"},
                     {"import_path", std::move(path)},
                     {"definition", {{"file", trace.defining_module().path}, {"name", definition.name},
                                     {"parameters", definition.parameters}}},
                     {"decoys", std::move(decoy_paths)},
                     {"repository_sha256", snapshot.sha256}};
  return content;
}

}  // namespace k3lab::validate::detail
