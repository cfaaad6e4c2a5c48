// SseParser against a spec-literal reference parser written here (normalize line endings, split
// lines, apply the field rules), on whole inputs and on every way of cutting them into pieces.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "k3lab/api/sse_parser.hpp"
#include "k3lab/core/rng.hpp"

namespace k3lab::api {
namespace {

struct Event {
  std::string event, data, id;
  bool operator==(const Event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  return os << "{event='" << e.event << "' data='" << e.data << "' id='" << e.id << "'}";
}

// The WHATWG algorithm stated as directly as possible, on the whole stream at once.
std::vector<Event> reference_parse(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  std::vector<std::string> lines;
  std::string line;
  bool complete_last = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') {
      lines.push_back(line);
      line.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      complete_last = true;
    } else {
      line += c;
      complete_last = false;
    }
  }
  (void)complete_last;  // a final unterminated line is never processed
  std::vector<Event> out;
  std::string data, type, id;
  bool has_data = false;
  for (const auto& l : lines) {
    if (l.empty()) {
      if (has_data) out.push_back({type, data, id});
      data.clear();
      type.clear();
      has_data = false;
      continue;
    }
    if (l[0] == ':') continue;
    std::string field = l, value;
    if (auto colon = l.find(':'); colon != std::string::npos) {
      field = l.substr(0, colon);
      value = l.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    }
    if (field == "data") {
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    } else if (field == "event") {
      type = value;
    } else if (field == "id") {
      id = value;
    }
  }
  return out;
}

std::vector<Event> parse_pieces(const std::string& text, const std::vector<std::size_t>& cuts) {
  std::vector<Event> out;
  SseParser parser([&](const SseEvent& e) { out.push_back({std::string(e.event), std::string(e.data), std::string(e.id)}); });
  std::size_t prev = 0;
  for (std::size_t cut : cuts) {
    parser.push(std::string_view(text).substr(prev, cut - prev));
    prev = cut;
  }
  parser.push(std::string_view(text).substr(prev));
  parser.finish();
  return out;
}

// Mixed line endings, comments, multi-line data, an empty data line, named events, ids, a retry field,
// unknown fields, multi-byte UTF-8 (2, 3 and 4 bytes), and a trailing unterminated event.
const std::string kStream =
    "\xEF\xBB\xBF: opening comment\n"
    "data: {\"a\":1}\n\n"
    "data: first line\r\ndata: second \xE5\xAD\x97 line\r\n\r\n"
    "event: error\rdata: {\"error\":{}}\r\r"
    "id: 7\ndata:no-space\ndata:  two spaces\n\n"
    "retry: 1500\nunknown: x\ndata\n\n"
    ": comment between\n"
    "data: emoji \xF0\x9F\x99\x82 and \xC3\xA9\n\n"
    "event: only-type\n\n"
    "data: [DONE]\n\n"
    "data: never dispatched";

TEST(SseParser, MatchesReferenceOnWholeInput) {
  const auto expected = reference_parse(kStream);
  ASSERT_EQ(expected.size(), 7u);  // the hand count of complete events above
  EXPECT_EQ(expected[1].data, "first line\nsecond \xE5\xAD\x97 line");
  EXPECT_EQ(parse_pieces(kStream, {}), expected);
}

TEST(SseParser, EveryByteBoundarySplitGivesTheSameEvents) {
  const auto expected = reference_parse(kStream);
  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    ASSERT_EQ(parse_pieces(kStream, {cut}), expected) << "split at byte " << cut;
  }
}

TEST(SseParser, EveryPairOfBoundariesGivesTheSameEvents) {
  const auto expected = reference_parse(kStream);
  for (std::size_t a = 0; a <= kStream.size(); a += 3) {
    for (std::size_t b = a; b <= kStream.size(); ++b) {
      ASSERT_EQ(parse_pieces(kStream, {a, b}), expected) << "split at " << a << " and " << b;
    }
  }
}

TEST(SseParser, OneBytePiecesGiveTheSameEvents) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < kStream.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(parse_pieces(kStream, cuts), reference_parse(kStream));
}

// Property: random streams built from random lines and endings, cut at random points.
TEST(SseParser, RandomStreamsAndRandomSplitsMatchReference) {
  core::Rng rng(20260803);
  const char* fragments[] = {"data: x",       "data:",   "data: \xE5\xAD\x97\xF0\x9F\x99\x82", ": c",   "event: e",
                             "id: 1",         "data",    "retry: 10",                          "",      "data: [DONE]",
                             "data:  sp",     "field: v"};
  const char* endings[] = {"\n", "\r\n", "\r"};
  for (int trial = 0; trial < 400; ++trial) {
    std::string text;
    const auto lines = 1 + rng.below(30);
    for (std::uint64_t l = 0; l < lines; ++l) {
      text += fragments[rng.below(std::size(fragments))];
      text += endings[rng.below(3)];
    }
    const auto expected = reference_parse(text);
    std::vector<std::size_t> cuts;
    const auto n_cuts = rng.below(8);
    for (std::uint64_t c = 0; c < n_cuts; ++c) cuts.push_back(rng.below(text.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    ASSERT_EQ(parse_pieces(text, cuts), expected) << "trial " << trial;
  }
}

TEST(SseParser, FinishReportsAnUnfinishedEventAndDropsIt) {
  std::vector<std::string> seen;
  SseParser parser([&](const SseEvent& e) { seen.emplace_back(e.data); });
  parser.push("data: complete\n\ndata: partial");
  EXPECT_FALSE(parser.finish());
  EXPECT_EQ(seen, std::vector<std::string>{"complete"});

  SseParser clean([](const SseEvent&) {});
  clean.push("data: a\n\n");
  EXPECT_TRUE(clean.finish());
}

TEST(SseParser, CountsCommentsAndReadsRetry) {
  SseParser parser([](const SseEvent&) {});
  parser.push(": one\n: two\nretry: 2500\nretry: bad\n\n");
  EXPECT_EQ(parser.comment_lines(), 2u);
  EXPECT_EQ(parser.retry_ms(), 2500);
  EXPECT_EQ(parser.events_dispatched(), 0u);
}

TEST(SseParser, CrAtPieceEndFollowedByLfIsOneTerminator) {
  std::vector<std::string> seen;
  SseParser parser([&](const SseEvent& e) { seen.emplace_back(e.data); });
  parser.push("data: a\r");
  parser.push("\n\r");
  parser.push("\n");
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace k3lab::api
