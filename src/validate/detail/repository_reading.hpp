#pragma once
// How the mock reader answers the repository family's questions on a pinned real repository: it
// analyses the file sections of the prompt (python_trace.hpp) and follows the imports, seeing only what
// the prompt shows. A confused reading takes another module of the prompt that defines the same name in
// place of the defining module (the farthest step), or answers "not found" when there is none.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate::detail {

struct FileSection {
  std::string path;
  std::string_view content;
  std::size_t section = 0;  // index of the document section
};

struct RepositoryReading {
  std::string answer = "not found";
  std::vector<std::size_t> used;
  std::string confused_answer = "not found";
  std::vector<std::size_t> confused_used;
};

// nullopt when the question is not one of the pinned repository's question forms.
std::optional<RepositoryReading> read_repository_question(std::string_view question,
                                                          const std::vector<FileSection>& files);

}  // namespace k3lab::validate::detail
