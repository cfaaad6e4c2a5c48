// The tiktoken-format tokenizer on a small hand-made vocabulary whose expected ids are worked out
// by hand in the comments; the heap merge against the quadratic statement of the rule; the Kimi
// pre-tokenizer on splits taken from a reference test of Moonshot's tokenizer and on hand cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/temp_dir.hpp"
#include "k3lab/api/bpe_merge.hpp"
#include "k3lab/api/bpe_tokenizer.hpp"
#include "k3lab/api/pretokenizer.hpp"
#include "k3lab/api/token_estimate.hpp"
#include "k3lab/core/rng.hpp"

namespace k3lab::api {
namespace {

using Ids = std::vector<std::uint32_t>;
using Pieces = std::vector<std::string_view>;

// Every byte b has rank b; merges above 255.
RankMap hand_vocabulary() {
  RankMap ranks;
  for (int b = 0; b < 256; ++b) ranks.emplace(std::string(1, static_cast<char>(b)), static_cast<std::uint32_t>(b));
  ranks.emplace("ab", 256);
  ranks.emplace("ca", 257);
  ranks.emplace("abc", 258);
  ranks.emplace(" ab", 259);
  ranks.emplace("aa", 260);
  ranks.emplace("aaa", 261);
  ranks.emplace("12", 262);
  return ranks;
}

const PreTokenizer& kimi() {
  static const PreTokenizer pre;
  return pre;
}

TEST(KimiPretokenizer, HanRunsSplitFromLetters) {
  // From a reference test of Moonshot's own tokenizer (tiktoken + tokenization_kimi.py's pat_str).
  EXPECT_EQ(kimi().split("中文English混合"), (Pieces{"中文", "English", "混合"}));
  EXPECT_EQ(kimi().split("汉字abc"), (Pieces{"汉字", "abc"}));
  EXPECT_EQ(kimi().split("北京市 Pascal"), (Pieces{"北京市", " Pascal"}));
}

TEST(KimiPretokenizer, HandCases) {
  EXPECT_EQ(kimi().split("Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
  EXPECT_EQ(kimi().split("I'll go, don't"), (Pieces{"I'll", " go", ",", " don't"}));
  EXPECT_EQ(kimi().split("1234567"), (Pieces{"123", "456", "7"}));
  EXPECT_EQ(kimi().split("a  b\n\n c"), (Pieces{"a", " ", " b", "\n\n", " c"}));
  EXPECT_EQ(kimi().split("HELLOworld x"), (Pieces{"HELLOworld", " x"}));
  EXPECT_EQ(kimi().split("end   "), (Pieces{"end", "   "}));
  EXPECT_EQ(kimi().split("café naïve"), (Pieces{"café", " naïve"}));
  EXPECT_TRUE(kimi().split("").empty());
}

TEST(KimiPretokenizer, PiecesTileTheText) {
  core::Rng rng(7);
  const char* atoms[] = {"a", "Z", " ", "\n", "\r\n", "\t", "7", "中", "é", "🙂", "'s", ".", "!!", "  "};
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    for (std::uint64_t i = 0, n = rng.below(40); i < n; ++i) text += atoms[rng.below(std::size(atoms))];
    std::string joined;
    for (auto p : kimi().split(text)) joined += p;
    ASSERT_EQ(joined, text);
  }
}

TEST(Pretokenizer, PatternIsAParameterAndMustCoverTheText) {
  const PreTokenizer words(R"(\S+|\s+)");
  EXPECT_EQ(words.split("a b"), (Pieces{"a", " ", "b"}));
  const PreTokenizer gaps("[a-z]+");
  EXPECT_THROW(gaps.split("a b"), std::invalid_argument);
  EXPECT_THROW(PreTokenizer("(unclosed"), std::invalid_argument);
  EXPECT_THROW(kimi().split("bad \xC3 utf8"), std::invalid_argument);
}

TEST(BytePairEncode, HandWorkedExamples) {
  const RankMap v = hand_vocabulary();
  // a b c a b -> ab c a b (256 at 0, leftmost of the two 256s) -> ab c ab -> abc ab (258); stop.
  EXPECT_EQ(byte_pair_encode("abcab", v), (Ids{258, 256}));
  // a a a a -> aa a a -> aa aa (260 beats aaa=261); "aaaa" is not a token.
  EXPECT_EQ(byte_pair_encode("aaaa", v), (Ids{260, 260}));
  // a a a a a -> aa a a a -> aa aa a (leftmost 260 among starts 2,3) -> aa aaa (261).
  EXPECT_EQ(byte_pair_encode("aaaaa", v), (Ids{260, 261}));
  // A whole piece in the vocabulary is one token.
  EXPECT_EQ(byte_pair_encode("aaa", v), (Ids{261}));
  EXPECT_EQ(byte_pair_encode("xyz", v), (Ids{'x', 'y', 'z'}));
  EXPECT_TRUE(byte_pair_encode("", v).empty());
}

TEST(BytePairEncode, HeapEqualsReferenceOnRandomVocabularies) {
  core::Rng rng(42);
  for (int vocab_trial = 0; vocab_trial < 20; ++vocab_trial) {
    RankMap v;
    for (int b = 0; b < 256; ++b) v.emplace(std::string(1, static_cast<char>(b)), static_cast<std::uint32_t>(b));
    // Random multi-byte tokens over a 3-letter alphabet, with random distinct ranks.
    std::vector<std::uint32_t> ranks;
    for (std::uint32_t r = 256; r < 356; ++r) ranks.push_back(r);
    for (std::size_t i = ranks.size(); i > 1; --i) std::swap(ranks[i - 1], ranks[rng.below(i)]);
    std::size_t next = 0;
    while (next < ranks.size()) {
      std::string token;
      for (std::uint64_t k = 0, n = 2 + rng.below(5); k < n; ++k) token.push_back("abc"[rng.below(3)]);
      if (v.emplace(token, ranks[next]).second) ++next;
    }
    for (int piece_trial = 0; piece_trial < 100; ++piece_trial) {
      std::string piece;
      for (std::uint64_t k = 0, n = rng.below(80); k < n; ++k) piece.push_back("abc"[rng.below(3)]);
      ASSERT_EQ(byte_pair_encode(piece, v), byte_pair_encode_reference(piece, v)) << "piece '" << piece << "'";
    }
  }
}

TEST(BpeTokenizer, EncodesWithPretokenizationAndSpecials) {
  const BpeTokenizer tok(hand_vocabulary(), {{"<|im_end|>", 1000}, {"<|im_end|>!", 1001}});
  // "1212" pre-tokenizes as "121" + "2": 12 merges in the first piece only.
  EXPECT_EQ(tok.encode_ordinary("1212"), (Ids{262, '1', '2'}));
  // " ab" is a whole token; "abcab" as above.
  EXPECT_EQ(tok.encode_ordinary("abcab ab"), (Ids{258, 256, 259}));
  EXPECT_EQ(tok.encode("ab<|im_end|>ab"), (Ids{256, 1000, 256}));
  // The longest special at one position wins.
  EXPECT_EQ(tok.encode("ab<|im_end|>!"), (Ids{256, 1001}));
  const Ids ordinary = tok.encode_ordinary("ab<|im_end|>ab");
  EXPECT_EQ(std::count(ordinary.begin(), ordinary.end(), 1000u), 0);
  EXPECT_EQ(tok.decode(ordinary), "ab<|im_end|>ab");
  EXPECT_EQ(tok.decode(tok.encode("x<|im_end|>y")), "x<|im_end|>y");
  EXPECT_EQ(tok.count("abcab"), 2u);
  EXPECT_THROW(tok.decode({999999}), std::invalid_argument);
}

TEST(BpeTokenizer, RoundTripsAndStaysUnderTheByteBound) {
  const BpeTokenizer tok(hand_vocabulary());
  core::Rng rng(3);
  const char* atoms[] = {"ab", "c", "a", " ", "12", "\n", "中文", "é", "🙂", "<|im_end|>", "Zz", "'ll"};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    for (std::uint64_t i = 0, n = rng.below(50); i < n; ++i) text += atoms[rng.below(std::size(atoms))];
    const Ids ids = tok.encode(text);
    ASSERT_EQ(tok.decode(ids), text);
    ASSERT_LE(ids.size(), token_upper_bound(text));
  }
}

TEST(BpeTokenizer, RejectsIncompleteVocabulariesAndCollidingSpecials) {
  RankMap missing = hand_vocabulary();
  missing.erase(std::string(1, '\x7f'));
  EXPECT_THROW(BpeTokenizer{missing}, std::invalid_argument);
  EXPECT_THROW(BpeTokenizer(hand_vocabulary(), {{"<|x|>", 256}}), std::invalid_argument);
  EXPECT_THROW(BpeTokenizer(hand_vocabulary(), {{"", 5000}}), std::invalid_argument);
}

TEST(TiktokenFile, ParsesAndRejectsMalformedLines) {
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_EQ(base64_decode("Zm8="), "fo");
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode("/w=="), "\xff");
  EXPECT_THROW(base64_decode("Zg="), std::invalid_argument);
  EXPECT_THROW(base64_decode("Z!=="), std::invalid_argument);
  EXPECT_THROW(base64_decode("Zg==Zg=="), std::invalid_argument);

  std::istringstream ok("YQ== 0\r\nYg== 1\n\nYWI= 2\n");
  const RankMap ranks = parse_tiktoken_ranks(ok, "ok.tiktoken");
  EXPECT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks.at("ab"), 2u);

  auto error_of = [](const std::string& text) {
    std::istringstream in(text);
    try {
      parse_tiktoken_ranks(in, "v.tiktoken");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("YQ== 0\nYg==\n").find("v.tiktoken:2: no space"), std::string::npos);
  EXPECT_NE(error_of("YQ== x\n").find("not a non-negative integer"), std::string::npos);
  EXPECT_NE(error_of("YQ== 0\nYg== 0\n").find("rank 0 appears twice"), std::string::npos);
  EXPECT_NE(error_of("YQ== 0\nYQ== 1\n").find("token bytes appear twice"), std::string::npos);
  EXPECT_NE(error_of("!!!! 0\n").find("v.tiktoken:1"), std::string::npos);
  EXPECT_NE(error_of("\n\n").find("no vocabulary lines"), std::string::npos);
}

TEST(TiktokenFile, LoadsAVocabularyFileIntoATokenizer) {
  const k3lab::testing::TempDir dir("k3lab-api-vocab");
  const auto path = dir / "vocab.tiktoken";
  {
    std::ofstream out(path, std::ios::binary);
    static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int b = 0; b < 256; ++b) {
      out << kB64[b >> 2] << kB64[(b & 3) << 4] << "== " << b << "\n";
    }
    out << "YWI= 256\n";  // "ab"
  }
  const BpeTokenizer tok = BpeTokenizer::from_file(path);
  EXPECT_EQ(tok.encode("abab ab"), (Ids{256, 256, ' ', 256}));
  EXPECT_EQ(tok.vocabulary_size(), 257u);
  EXPECT_THROW(BpeTokenizer::from_file("/nonexistent/tiktoken.model"), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
