// The mock's context-probe model: it answers from the prompt alone, and the validator agrees with the
// fixture's ground truth when recall cannot fail.
#include <gtest/gtest.h>

#include "context_probe/cell_prompt.hpp"
#include "k3lab/mock/reader_model.hpp"
#include "k3lab/validate/context_validator.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;

TEST(ReaderModel, PerfectRecallPassesEveryFamilyAndReasons) {
  validate::ReaderConfig perfect;
  perfect.base_failure = 0;
  perfect.max_failure = 0;
  const auto model = mock::context_reader_model(perfect);
  const auto p = smoke_parameters();
  for (const auto& u : smoke_units()) {
    if (u.spec["stratum"] != "cold" || u.spec["length"] != 32768) continue;
    const auto cell = cp::build_cell_prompt(p, u.spec, "", validate::conservative_byte_estimator());
    const auto reply = model(cell.request);
    ASSERT_FALSE(reply.error.has_value()) << u.id;
    const auto verdict = validate::validate_context_answer(cell.fixture, reply.content);
    EXPECT_TRUE(verdict.passed) << u.id << ": expected " << cell.fixture.expected_answer << ", got " << reply.content;
    EXPECT_EQ(verdict.evidence.coverage, 1.0) << u.id;
    EXPECT_NE(reply.reasoning_content.find("Reader notes"), std::string::npos);
  }
}

TEST(ReaderModel, CertainRecallLossFailsTheValidator) {
  validate::ReaderConfig broken;
  broken.base_failure = 1;
  broken.max_failure = 1;
  const auto model = mock::context_reader_model(broken);
  const auto p = smoke_parameters();
  const auto u = smoke_unit("family=distractor/fixture=1/length=32768/stratum=cold/rep=1");
  const auto cell = cp::build_cell_prompt(p, u.spec, "", validate::conservative_byte_estimator());
  EXPECT_FALSE(validate::validate_context_answer(cell.fixture, model(cell.request).content).passed);
}

TEST(ReaderModel, ThinkingOffSendsNoReasoningAndEmptyRequestsAreErrors) {
  const auto model = mock::context_reader_model();
  nlohmann::json request = {{"model", "kimi-k3"},
                            {"messages", {{{"role", "user"}, {"content", "hello"}}}},
                            {"thinking", {{"type", "disabled"}}}};
  EXPECT_TRUE(model(request).reasoning_content.empty());
  request["messages"] = {{{"role", "system"}, {"content", "only a system message"}}};
  const auto reply = model(request);
  ASSERT_TRUE(reply.error.has_value());
  EXPECT_EQ(reply.error->status, 400);
  validate::ReaderConfig bad;
  bad.base_failure = 0.5;
  bad.max_failure = 0.1;
  EXPECT_THROW(mock::context_reader_model(bad), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::context_probe_test
