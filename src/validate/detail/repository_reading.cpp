#include "detail/repository_reading.hpp"

#include <map>

#include "k3lab/validate/prompt_format.hpp"
#include "k3lab/validate/python_trace.hpp"

namespace k3lab::validate::detail {
namespace {

struct ParsedQuestion {
  std::string path;
  std::string name;
  bool count_parameters = false;
};

std::optional<ParsedQuestion> parse_question(std::string_view question) {
  if (question.substr(0, kRepositoryQuestionLead.size()) != kRepositoryQuestionLead) return std::nullopt;
  question.remove_prefix(kRepositoryQuestionLead.size());
  const std::size_t imports = question.find(kRepositoryQuestionImports);
  if (imports == std::string_view::npos) return std::nullopt;
  ParsedQuestion parsed;
  parsed.path = std::string(question.substr(0, imports));
  question.remove_prefix(imports + kRepositoryQuestionImports.size());
  const std::size_t stop = question.find(". ");
  if (stop == std::string_view::npos) return std::nullopt;
  parsed.name = std::string(question.substr(0, stop));
  const std::string_view tail = question.substr(stop + 2);
  if (tail == kParameterCountQuestion) {
    parsed.count_parameters = true;
  } else if (tail != kDefinitionSiteQuestion) {
    return std::nullopt;
  }
  return parsed;
}

std::string answer_for(const PythonModule& module, const PythonBinding& definition, bool count_parameters) {
  if (!count_parameters) return module.path + ":" + definition.name;
  if (definition.kind != PythonBinding::Kind::function) return "not found";
  return std::to_string(definition.parameters.size());
}

}  // namespace

std::optional<RepositoryReading> read_repository_question(std::string_view question,
                                                          const std::vector<FileSection>& files) {
  const std::optional<ParsedQuestion> parsed = parse_question(question);
  if (!parsed) return std::nullopt;
  std::vector<PythonModule> modules;
  std::map<std::string, std::size_t> section_of;
  for (const FileSection& file : files) {
    if (file.path.size() < 4 || file.path.substr(file.path.size() - 3) != ".py") continue;
    if (!section_of.emplace(file.path, file.section).second) continue;  // the first copy of a path counts
    modules.push_back(analyze_python_module(file.path, file.content));
  }
  const PythonRepository repository(std::move(modules));
  RepositoryReading reading;
  const PythonModule* importer = repository.module_at(parsed->path);
  if (importer == nullptr) return reading;
  const std::optional<DefinitionTrace> trace = repository.trace(importer->name, parsed->name);
  if (!trace) return reading;
  for (const TraceStep& step : trace->steps) reading.used.push_back(section_of.at(step.module->path));
  reading.answer = answer_for(trace->defining_module(), trace->definition(), parsed->count_parameters);

  // Confused: the same name's definition nearest to the question, instead of the defining module.
  const PythonModule* competitor = nullptr;
  for (const PythonModule* other : repository.other_definitions(trace->definition().name, trace->defining_module().path)) {
    if (competitor == nullptr || section_of.at(other->path) > section_of.at(competitor->path)) competitor = other;
  }
  if (competitor != nullptr) {
    reading.confused_used.assign(reading.used.begin(), reading.used.end() - 1);
    reading.confused_used.push_back(section_of.at(competitor->path));
    reading.confused_answer =
        answer_for(*competitor, *competitor->unique_binding(trace->definition().name), parsed->count_parameters);
  }
  return reading;
}

}  // namespace k3lab::validate::detail
