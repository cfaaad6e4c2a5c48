// Tables as Markdown, CSV and JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/report/page.hpp"

namespace k3lab::report {
namespace {

// An RFC 4180 reader written for the test: fields, quoted fields with "" escapes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  bool field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
      rows.emplace_back();
    } else {
      EXPECT_NE(c, '"') << "bare quote inside an unquoted field";
      field += c;
      field_started = true;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  EXPECT_TRUE(rows.back().empty() && field.empty()) << "CSV must end with a newline";
  rows.pop_back();
  return rows;
}

Table sample_table() {
  Table t;
  t.id = "sample";
  t.columns = {"name", "loss", "count", "note"};
  t.rows.push_back({Cell("plain"), Cell(3.14159265, 3), Cell(42), Cell("a,b")});
  t.rows.push_back({Cell("say \"hi\""), Cell(0.000123456), Cell(std::int64_t{-7}), Cell("line1\nline2")});
  t.rows.push_back({Cell("pipe | cell"), Cell(std::nan("")), Cell(), Cell("")});
  return t;
}

TEST(TableCsv, QuotesCommasQuotesAndNewlines) {
  const std::string csv = table_csv(sample_table());
  EXPECT_NE(csv.find("plain,3.14,42,\"a,b\"\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"say \"\"hi\"\"\""), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"line1\nline2\""), std::string::npos) << csv;
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "loss", "count", "note"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"plain", "3.14", "42", "a,b"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"say \"hi\"", "0.0001235", "-7", "line1\nline2"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"pipe | cell", "NaN", "", ""}));
}

TEST(TableMarkdown, EscapesAndAligns) {
  const std::string md = table_markdown(sample_table());
  const std::string expected =
      "| name | loss | count | note |\n"
      "|---|---:|---:|---|\n"
      "| plain | 3.14 | 42 | a,b |\n"
      "| say \"hi\" | 0.0001235 | -7 | line1<br>line2 |\n"
      "| pipe \\| cell | NaN | – |  |\n";
  EXPECT_EQ(md, expected);
}

// Markdown is for readers (grouped counts, no exponents on large values); CSV stays machine-readable
// (plain integers, doubles in C-locale %g form).
TEST(TableMarkdown, CountsAreGroupedWhileCsvKeepsPlainNumbers) {
  Table t;
  t.id = "counts";
  t.columns = {"admitted", "parameters"};
  t.rows.push_back({Cell(std::int64_t{1000000}), Cell(199800.0)});
  EXPECT_NE(table_markdown(t).find("| 1,000,000 | 199,800 |"), std::string::npos) << table_markdown(t);
  EXPECT_NE(table_csv(t).find("1000000,1.998e+05\n"), std::string::npos) << table_csv(t);
}

TEST(TableJson, RowObjectsKeyedByColumn) {
  const nlohmann::json rows = table_json(sample_table());
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["name"], "plain");
  EXPECT_DOUBLE_EQ(rows[0]["loss"].get<double>(), 3.14159265);  // full precision, not 3 digits
  EXPECT_TRUE(rows[0]["count"].is_number_integer());
  EXPECT_EQ(rows[1]["count"].get<std::int64_t>(), -7);
  EXPECT_EQ(rows[1]["note"], "line1\nline2");
  EXPECT_TRUE(rows[2]["count"].is_null());
  EXPECT_EQ(rows[2].dump().find("NaN"), std::string::npos);  // NaN serialises as null
  EXPECT_NE(rows[2].dump().find("\"loss\":null"), std::string::npos);
}

TEST(Table, RejectsMalformedTables) {
  Table ragged = sample_table();
  ragged.rows[1].pop_back();
  EXPECT_THROW(table_csv(ragged), std::invalid_argument);
  EXPECT_THROW(table_markdown(ragged), std::invalid_argument);
  Table duplicate = sample_table();
  duplicate.columns[1] = "name";
  EXPECT_THROW(table_json(duplicate), std::invalid_argument);
  Table no_columns;
  EXPECT_THROW(table_markdown(no_columns), std::invalid_argument);
  Table bad_precision;
  bad_precision.columns = {"x"};
  bad_precision.rows.push_back({Cell(1.0, 0)});
  EXPECT_THROW(table_csv(bad_precision), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::report
