#include <sstream>

#include <gtest/gtest.h>

#include "k3lab/sim/trace_csv.hpp"

namespace k3lab::sim {
namespace {

Trace import(const std::string& text, CsvTraceFormat format, CsvImportReport* report = nullptr, bool skip = false) {
  std::istringstream in(text);
  CsvImportOptions options;
  options.format = format;
  options.skip_bad_rows = skip;
  return import_trace_csv(in, "t.csv", options, report);
}

std::string error_of(const std::string& text, CsvTraceFormat format) {
  try {
    import(text, format);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceCsv, ReadsBurstGptColumns) {
  const std::string csv =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n"
      "5,ChatGPT,472,18,490,Conversation log\r\n"
      "5.25,\"GPT-4, large\",1000,0,1000,API log\r\n"
      "\r\n"
      "7.000001,ChatGPT,10,5,15,Conversation log\r\n";
  CsvImportReport report;
  const Trace t = import(csv, CsvTraceFormat::BurstGpt, &report);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.records[0].arrival_us, 0);
  EXPECT_EQ(t.records[1].arrival_us, 250000);
  EXPECT_EQ(t.records[2].arrival_us, 2000001);
  EXPECT_EQ(t.records[0].prompt_tokens, 472u);
  EXPECT_EQ(t.records[0].output_tokens, 18u);
  EXPECT_EQ(t.records[1].output_tokens, 0u);
  EXPECT_EQ(report.data_rows, 3u);
  EXPECT_EQ(report.imported, 3u);
  EXPECT_EQ(t.source, "burstgpt:t.csv");
}

TEST(TraceCsv, ReadsAzureColumnsInAnyOrderAndSortsByTime) {
  const std::string csv =
      "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46.6805900,374,44\n"
      "2023-11-16 18:15:46.1000000,1020,129\n"
      "2023-11-17 00:00:00,5,1\n";
  CsvImportReport report;
  const Trace t = import(csv, CsvTraceFormat::Azure, &report);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(report.out_of_order, 1u);
  EXPECT_EQ(t.records[0].prompt_tokens, 1020u);
  EXPECT_EQ(t.records[1].arrival_us, 580590);  // .6805900 - .1000000, truncated to microseconds
  // 18:15:46.1 -> next midnight: 5h 44m 13.9s.
  EXPECT_EQ(t.records[2].arrival_us, ((5 * 60 + 44) * 60 + 13) * 1'000'000LL + 900000);
}

TEST(TraceCsv, ParsesUtcTimestamps) {
  EXPECT_EQ(parse_utc_timestamp_us("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(parse_utc_timestamp_us("1970-01-02T00:00:01.5Z"), 86'401'500'000LL);
  EXPECT_EQ(parse_utc_timestamp_us("2000-03-01 00:00:00"), 951'868'800'000'000LL);
  EXPECT_THROW(parse_utc_timestamp_us("2023/11/16 18:15:46"), std::invalid_argument);
  EXPECT_THROW(parse_utc_timestamp_us("2023-13-16 18:15:46"), std::invalid_argument);
  EXPECT_THROW(parse_utc_timestamp_us("2023-11-16 18:15:46+02:00"), std::invalid_argument);
}

TEST(TraceCsv, BadRowsAreErrorsNamingLineColumnAndFix) {
  const std::string header = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  std::string e = error_of(header + "1,m,10,5,15,x\n2,m,ten,5,15,x\n", CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("t.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("Request tokens"), std::string::npos) << e;
  EXPECT_NE(e.find("skip_bad_rows"), std::string::npos) << e;
  e = error_of(header + "1,m,10,5,16,x\n", CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("Total tokens"), std::string::npos) << e;
  e = error_of(header + "1,m,0,5,5,x\n", CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("needs a prompt"), std::string::npos) << e;
  e = error_of(header + "1,m,10,5\n", CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("has 4 fields"), std::string::npos) << e;
  e = error_of(header + "-1,m,10,5,15,x\n", CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("Timestamp"), std::string::npos) << e;
  e = error_of("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16,5,1\n", CsvTraceFormat::Azure);
  EXPECT_NE(e.find("TIMESTAMP"), std::string::npos) << e;
  e = error_of("a,b,c\n1,2,3\n", CsvTraceFormat::Azure);
  EXPECT_NE(e.find("header has no \"TIMESTAMP\" column"), std::string::npos) << e;
  EXPECT_NE(e.find("burstgpt or azure"), std::string::npos) << e;
  e = error_of("", CsvTraceFormat::Azure);
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  e = error_of(header, CsvTraceFormat::BurstGpt);
  EXPECT_NE(e.find("no usable data rows"), std::string::npos) << e;
}

TEST(TraceCsv, SkipBadRowsCountsThem) {
  const std::string csv =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46,374,44\n"
      "2023-11-16 18:15:47,0,44\n"
      "2023-11-16 18:15:48,12.0,3\n"
      "not a time,1,1\n";
  CsvImportReport report;
  const Trace t = import(csv, CsvTraceFormat::Azure, &report, true);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.records[1].prompt_tokens, 12u);
  EXPECT_EQ(report.skipped, 2u);
  ASSERT_EQ(report.problems.size(), 2u);
  EXPECT_NE(report.problems[0].find("t.csv:3"), std::string::npos);
}

TEST(TraceCsv, FormatNames) {
  EXPECT_EQ(parse_csv_trace_format("azure"), CsvTraceFormat::Azure);
  EXPECT_THROW(parse_csv_trace_format("sharegpt"), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::sim
