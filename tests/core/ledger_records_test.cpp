// Ledger records held as text (core/ledger_records.hpp) read back as the DOMs they were made from;
// copies and subsets share the text, and an append to one never shows in another.
#include <gtest/gtest.h>

#include "k3lab/core/ledger_records.hpp"

namespace k3lab::core {
namespace {

const std::vector<nlohmann::json> kSampleRecords = {
    {{"kind", "plan"}, {"units", {"a", "b"}}},
    {{"kind", "result"}, {"unit", "a"}, {"data", {{"x", 0.1}, {"big", 1e300}, {"n", -7}}}},
    {{"kind", "note"}, {"note", "caf\u00e9 \"quoted\"\n"}}};

TEST(LedgerRecords, ReadsBackEveryRecordAsTheDomItWasMadeFrom) {
  const LedgerRecords records(kSampleRecords);
  ASSERT_EQ(records.size(), kSampleRecords.size());
  std::size_t i = 0;
  for (const auto& r : records) EXPECT_EQ(r, kSampleRecords[i++]);
  EXPECT_EQ(i, kSampleRecords.size());
  EXPECT_EQ(records.front(), kSampleRecords.front());
  EXPECT_EQ(records.back(), kSampleRecords.back());
  EXPECT_EQ(records.to_vector(), kSampleRecords);
  EXPECT_EQ(records.text(1), kSampleRecords[1].dump());
  EXPECT_THROW(records[3], std::out_of_range);
}

TEST(LedgerRecords, SubsetsShareTheTextAndKeepTheirOrder) {
  const LedgerRecords records(kSampleRecords);
  const auto subset = records.subset({2, 0});
  ASSERT_EQ(subset.size(), 2u);
  EXPECT_EQ(subset[0], kSampleRecords[2]);
  EXPECT_EQ(subset[1], kSampleRecords[0]);
  // The subset's own cost is its index: far less than a second copy of the text.
  EXPECT_EQ(subset.text(0).data(), records.text(2).data());
}

TEST(LedgerRecords, AnAppendToACopyLeavesTheOriginalAlone) {
  const LedgerRecords original(kSampleRecords);
  LedgerRecords copy = original;
  copy.push_back({{"kind", "window"}, {"stop", true}});
  copy.insert(copy.begin(), kSampleRecords.begin() + 2, kSampleRecords.end());
  ASSERT_EQ(original.size(), 3u);
  EXPECT_EQ(original.to_vector(), kSampleRecords);
  ASSERT_EQ(copy.size(), 5u);
  EXPECT_EQ(copy[0], kSampleRecords[2]);
  EXPECT_EQ(copy[1], kSampleRecords[0]);
  EXPECT_EQ(copy[4].at("kind"), "window");
}

}  // namespace
}  // namespace k3lab::core
