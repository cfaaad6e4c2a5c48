#pragma once
// The fixed framing of a context-probe prompt (question wording and answer format stay fixed across
// the whole experiment, as the seed requires). The reader and the validators parse against these.
#include <string_view>

namespace k3lab::validate {

inline constexpr std::string_view kPromptInstructions =
    "Read the document below and answer the question that follows it. The document is divided into "
    "sections; each section begins with an evidence id in square brackets, for example [E00000]. Use only "
    "the document. Reply in exactly this format:\n"
    "ANSWER: <your answer>\n"
    "EVIDENCE: <comma-separated ids of every section that supports your answer>\n";
inline constexpr std::string_view kDocumentStartMarker = "=== DOCUMENT START ===";
inline constexpr std::string_view kDocumentEndMarker = "=== DOCUMENT END ===";
inline constexpr std::string_view kQuestionMarker = "QUESTION:";

// The repository family's questions on a pinned real repository:
//   kRepositoryQuestionLead + "<module path> imports the name <name>. " + one of the two tails.
inline constexpr std::string_view kRepositoryQuestionLead = "In this repository snapshot, the module ";
inline constexpr std::string_view kRepositoryQuestionImports = " imports the name ";
inline constexpr std::string_view kDefinitionSiteQuestion =
    "Following the imports, which file defines the object this name refers to there, and under which name? "
    "Answer as <file path>:<name>.";
inline constexpr std::string_view kParameterCountQuestion =
    "Following the imports to the def statement of that function, how many parameters does it declare, "
    "counting every named parameter including self, *args and **kwargs? Give the integer only.";

}  // namespace k3lab::validate
