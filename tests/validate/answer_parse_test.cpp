#include "k3lab/validate/answer_parse.hpp"

#include <gtest/gtest.h>

namespace k3lab::validate {
namespace {

struct Case {
  const char* text;
  const char* answer;
  std::vector<std::string> ids;
  bool answer_marker;
  bool evidence_marker;
};

TEST(AnswerParse, ToleratesFormatVariations) {
  const std::vector<Case> cases = {
      {"ANSWER: 4829137\nEVIDENCE: E01234, E00042", "4829137", {"E01234", "E00042"}, true, true},
      {"answer: 4829137\nevidence: e1234", "4829137", {"E01234"}, true, true},
      {"**Answer:** 4829137\n**Evidence:** [E01234]", "4829137", {"E01234"}, true, true},
      {"### Final answer\n- Final Answer = 55\n- Evidence ids: E00001; E00002", "55", {"E00001", "E00002"}, true, true},
      {"ANSWER: 42 EVIDENCE: E00003", "42", {"E00003"}, true, true},
      {"ANSWER: 42 (evidence: E00003)", "42", {"E00003"}, true, true},
      {"ANSWER:\n  Esme Varga\nEVIDENCE:\n- E00010\n- E00011", "Esme Varga", {"E00010", "E00011"}, true, true},
      {"Answer - 17\nCitations: E00005", "17", {"E00005"}, true, true},
      {"Sources: E00004\nANSWER: 9", "9", {"E00004"}, true, true},
      {"ANSWER: draft 1\nEVIDENCE: E00001\nANSWER: 2\nEVIDENCE: E00002", "2", {"E00002"}, true, true},
      {"The value is 7 [E00008].", "The value is 7 [E00008].", {"E00008"}, false, false},
      {"\n\n  4829137  \n", "4829137", {}, false, false},
      {"ANSWER: -5\nEVIDENCE: none", "-5", {}, true, true},
      {"Answer the question: the answers are many\nEVIDENCE: E00001", "Answer the question: the answers are many",
       {"E00001"}, false, true},
      {"", "", {}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const ParsedAnswer parsed = parse_model_answer(c.text);
    EXPECT_EQ(parsed.answer, c.answer);
    EXPECT_EQ(parsed.evidence_ids, c.ids);
    EXPECT_EQ(parsed.has_answer_marker, c.answer_marker);
    EXPECT_EQ(parsed.has_evidence_marker, c.evidence_marker);
  }
}

TEST(AnswerParse, WindowsLineEndings) {
  const ParsedAnswer parsed = parse_model_answer("ANSWER: 12\r\nEVIDENCE: E00001\r\n");
  EXPECT_EQ(parsed.answer, "12");
  EXPECT_EQ(parsed.evidence_ids, std::vector<std::string>{"E00001"});
}

}  // namespace
}  // namespace k3lab::validate
