#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "k3lab/core/ledger.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab::core;
using k3lab::testing::TempDir;

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(Ledger, AppendsNumberedLinesAndContinuesSeq) {
  TempDir dir;
  {
    LedgerWriter w(dir.path());
    w.append({{"kind", "plan"}, {"units", {"u1", "u2"}}});
    w.append({{"kind", "result"}, {"unit", "u1"}, {"data", 1}});
  }
  LedgerWriter w(dir.path());
  EXPECT_EQ(w.next_seq(), 2);
  const auto r = w.append({{"kind", "result"}, {"unit", "u2"}});
  EXPECT_EQ(r["seq"], 2);
  const auto contents = read_ledger(dir.path());
  ASSERT_EQ(contents.records.size(), 3u);
  EXPECT_EQ(finished_units(contents), (std::vector<std::string>{"u1", "u2"}));
}

TEST(Ledger, SecondWriterIsRefusedWhileFirstHoldsTheLock) {
  TempDir dir;
  LedgerWriter first(dir.path());
  EXPECT_THROW({ LedgerWriter second(dir.path()); }, std::runtime_error);
  // A different shard is a different file and may be written concurrently.
  EXPECT_NO_THROW({ LedgerWriter shard(dir.path(), "w1"); });
}

TEST(Ledger, TornLastLineIsKeptCutAndNoted) {
  TempDir dir;
  {
    LedgerWriter w(dir.path());
    w.append({{"kind", "result"}, {"unit", "u1"}});
  }
  const std::string fragment = R"({"kind":"result","unit":"u2","da)";
  std::ofstream(dir.path() / "ledger.jsonl", std::ios::app) << fragment;
  EXPECT_EQ(read_ledger(dir.path()).torn_lines, 1u);
  LedgerWriter w(dir.path());
  EXPECT_TRUE(w.repaired_torn_line());
  const auto contents = read_ledger(dir.path());
  EXPECT_EQ(contents.torn_lines, 0u);
  ASSERT_EQ(contents.records.size(), 2u);
  EXPECT_EQ(contents.records[1]["kind"], "note");
  EXPECT_EQ(contents.records[1]["bytes"], fragment.size());
  // Nothing is deleted: the fragment survives as an artifact.
  const auto artifact = dir.path() / contents.records[1]["artifact"].get<std::string>();
  EXPECT_EQ(slurp(artifact), fragment);
  EXPECT_EQ(finished_units(contents), std::vector<std::string>{"u1"});
}

TEST(Ledger, CorruptCompleteLineIsAnErrorNotARepair) {
  TempDir dir;
  dir.write("ledger.jsonl", "{\"kind\":\"plan\"}\nnot json\n{\"kind\":\"note\"}\n");
  try {
    LedgerWriter w(dir.path());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(dir.path() / "ledger.jsonl"), "{\"kind\":\"plan\"}\nnot json\n{\"kind\":\"note\"}\n");
}

TEST(Ledger, ReaderTakesTheUnionOfShards) {
  TempDir dir;
  {
    LedgerWriter main(dir.path());
    LedgerWriter a(dir.path(), "task-1");
    LedgerWriter b(dir.path(), "task-2");
    main.append({{"kind", "plan"}, {"units", {"u1", "u2", "u3"}}});
    a.append({{"kind", "result"}, {"unit", "u1"}});
    b.append({{"kind", "invalid"}, {"unit", "u2"}, {"reason", "r"}});
    b.append({{"kind", "attempt"}, {"unit", "u3"}});
  }
  const auto contents = read_ledger(dir.path());
  EXPECT_EQ(contents.files.size(), 3u);
  EXPECT_EQ(contents.records.size(), 4u);
  EXPECT_EQ(finished_units(contents), (std::vector<std::string>{"u1", "u2"}));
}

TEST(Ledger, FailedWriteLeavesNoPartialLine) {
  TempDir dir;
  LedgerWriter w(dir.path());
  w.append({{"kind", "result"}, {"unit", "u1"}});
  const auto size_before = std::filesystem::file_size(w.path());
  // Simulate a full disk: cap the file size so the next write fails part-way.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit tight = old;
  tight.rlim_cur = size_before + 10;
  setrlimit(RLIMIT_FSIZE, &tight);
  EXPECT_THROW(w.append({{"kind", "result"}, {"unit", "u2"}, {"data", std::string(200, 'x')}}), std::runtime_error);
  setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_EQ(std::filesystem::file_size(w.path()), size_before);
  const auto next = w.append({{"kind", "result"}, {"unit", "u2"}});
  EXPECT_EQ(next["seq"], 1);
  EXPECT_EQ(read_ledger(dir.path()).records.size(), 2u);
}

TEST(Ledger, DeterministicPartDropsTimes) {
  nlohmann::json a = {{"kind", "result"}, {"seq", 1}, {"t", "x"}, {"timing", {{"s", 1}}}, {"data", 3}};
  nlohmann::json b = {{"kind", "result"}, {"seq", 9}, {"t", "y"}, {"timing", {{"s", 2}}}, {"data", 3}};
  EXPECT_EQ(deterministic_part(a), deterministic_part(b));
  b["data"] = 4;
  EXPECT_NE(deterministic_part(a), deterministic_part(b));
}

namespace {
// The error from reading (and from opening a writer on) a run dir whose ledger has `bad` as line 2.
std::pair<std::string, std::string> errors_for_second_line(const std::string& bad) {
  TempDir dir;
  const std::string content = "{\"kind\":\"plan\",\"units\":[\"u1\"]}\n" + bad + "\n{\"kind\":\"note\"}\n";
  const auto file = dir.write("ledger.jsonl", content);
  std::pair<std::string, std::string> errors;
  try {
    read_ledger(dir.path());
  } catch (const std::runtime_error& e) {
    errors.first = e.what();
  }
  try {
    LedgerWriter w(dir.path());
  } catch (const std::runtime_error& e) {
    errors.second = e.what();
  }
  EXPECT_EQ(slurp(file), content) << "a bad line is reported, never repaired";
  // The writer that failed released its lock: a later one gets as far as the same error.
  try {
    LedgerWriter again(dir.path());
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(" line 2 "), std::string::npos) << e.what();
  }
  for (std::string* text : {&errors.first, &errors.second}) {
    const auto at = text->find(file.string() + " line 2 is not a ledger record: ");
    EXPECT_EQ(at, 0u) << *text;
    EXPECT_EQ(text->find("[json.exception"), std::string::npos) << *text;
  }
  return errors;
}
}  // namespace

TEST(Ledger, LinesThatAreNotRecordsNameFileAndLine) {
  EXPECT_NE(errors_for_second_line("42").first.find("expected a JSON object, got 42"), std::string::npos);
  EXPECT_NE(errors_for_second_line("[]").first.find("expected a JSON object, got []"), std::string::npos);
  EXPECT_NE(errors_for_second_line("\"text\"").first.find("expected a JSON object"), std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"unit":"u1"})").first.find("no \"kind\""), std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"kind":5,"unit":"u1"})").first.find("\"kind\" must be a non-empty string"),
            std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"kind":"result","unit":7})").first.find("\"unit\" must be a string, got 7"),
            std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"kind":"result"})").first.find("must name its \"unit\""), std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"kind":"note","seq":"3"})").first.find("\"seq\" must be an integer"),
            std::string::npos);
  EXPECT_NE(errors_for_second_line(R"({"kind":"plan","units":[1]})").first.find("unit id strings"), std::string::npos);
  EXPECT_NE(errors_for_second_line("{\"kind\":\"note\",\"n\":1e400}").first.find("beyond the range of a double"),
            std::string::npos);
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_NE(errors_for_second_line("{\"kind\":\"note\",\"x\":" + deep + "}").first.find("deeper than 100 levels"),
            std::string::npos);
}

TEST(Ledger, WriterRefusesRecordsReadersWouldRefuse) {
  TempDir dir;
  LedgerWriter w(dir.path());
  EXPECT_THROW(w.append({{"kind", "result"}, {"unit", 3}}), std::invalid_argument);
  EXPECT_THROW(w.append({{"kind", "failure"}}), std::invalid_argument);
  EXPECT_THROW(w.append({{"unit", "u1"}}), std::invalid_argument);
  EXPECT_EQ(std::filesystem::file_size(w.path()), 0u);
  w.append({{"kind", "result"}, {"unit", "u1"}});
  EXPECT_EQ(read_ledger(dir.path()).records.size(), 1u);
}
