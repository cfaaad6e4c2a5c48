#include "k3lab/validate/evidence_ids.hpp"

#include <gtest/gtest.h>

namespace k3lab::validate {
namespace {

TEST(EvidenceIds, FormatPadsAndRejectsOutOfRange) {
  EXPECT_EQ(format_evidence_id(0), "E00000");
  EXPECT_EQ(format_evidence_id(1234), "E01234");
  EXPECT_EQ(format_evidence_id(99999), "E99999");
  EXPECT_THROW(format_evidence_id(100000), std::invalid_argument);
}

TEST(EvidenceIds, CanonicalToken) {
  EXPECT_EQ(canonical_evidence_id("E01234"), "E01234");
  EXPECT_EQ(canonical_evidence_id("[e1234]"), "E01234");
  EXPECT_EQ(canonical_evidence_id(" E-01234 "), "E01234");
  EXPECT_EQ(canonical_evidence_id("E0001234"), "E01234");
  EXPECT_EQ(canonical_evidence_id("E123456"), "E123456");  // too many digits: matches nothing
  EXPECT_FALSE(canonical_evidence_id("E"));
  EXPECT_FALSE(canonical_evidence_id("X01234"));
  EXPECT_FALSE(canonical_evidence_id("E12a"));
}

TEST(EvidenceIds, ExtractFromFreeText) {
  EXPECT_EQ(extract_evidence_ids("EVIDENCE: E01234, [E00042] and e7; again E1234."),
            (std::vector<std::string>{"E01234", "E00042", "E00007"}));
  EXPECT_TRUE(extract_evidence_ids("ORE123 Each E x E-").empty());
  EXPECT_EQ(extract_evidence_ids("(E00001)(E00002)"), (std::vector<std::string>{"E00001", "E00002"}));
}

TEST(EvidenceIds, Coverage) {
  const EvidenceCoverage c = evidence_coverage({"E00001", "E00002", "E00003"}, {"e2", "[E00003]", "E00009"});
  EXPECT_DOUBLE_EQ(c.coverage, 2.0 / 3.0);
  EXPECT_EQ(c.cited_required, (std::vector<std::string>{"E00002", "E00003"}));
  EXPECT_EQ(c.missing_required, (std::vector<std::string>{"E00001"}));
  EXPECT_EQ(c.cited_other, (std::vector<std::string>{"E00009"}));
  EXPECT_DOUBLE_EQ(evidence_coverage({"E00001"}, {}).coverage, 0.0);
  EXPECT_DOUBLE_EQ(evidence_coverage({}, {"E00001"}).coverage, 1.0);
}

}  // namespace
}  // namespace k3lab::validate
