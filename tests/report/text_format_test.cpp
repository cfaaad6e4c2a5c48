// Locale-free number formatting and XML escaping.
#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <limits>
#include <string>

#include "k3lab/report/svg.hpp"
#include "xml_check.hpp"

namespace k3lab::report {
namespace {

TEST(FormatFixed, TrimsAndNormalises) {
  EXPECT_EQ(format_fixed(12.5, 2), "12.5");
  EXPECT_EQ(format_fixed(12.0, 2), "12");
  EXPECT_EQ(format_fixed(0.125, 2), "0.12");  // round-half-even on the exact binary value 0.125
  EXPECT_EQ(format_fixed(-0.001, 2), "0");    // no "-0"
  EXPECT_EQ(format_fixed(-3.456, 2), "-3.46");
  EXPECT_EQ(format_fixed(std::nan(""), 2), "NaN");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 2), "-inf");
}

TEST(FormatSignificant, LikePrintfG) {
  EXPECT_EQ(format_significant(3.14159, 3), "3.14");
  EXPECT_EQ(format_significant(123456.0, 4), "1.235e+05");
  EXPECT_EQ(format_significant(0.0001234, 2), "0.00012");
  EXPECT_EQ(format_significant(-0.0, 4), "0");
  EXPECT_THROW(format_significant(1.0, 0), std::invalid_argument);
}

TEST(FormatSignificant, IgnoresTheLocale) {
  // A comma-decimal locale must not leak into reports (printf would write "3,14").
  const char* previous = std::setlocale(LC_NUMERIC, nullptr);
  const std::string saved = previous ? previous : "C";
  if (std::setlocale(LC_NUMERIC, "de_DE.UTF-8") == nullptr && std::setlocale(LC_NUMERIC, "fr_FR.UTF-8") == nullptr) {
    GTEST_SKIP() << "no comma-decimal locale installed";
  }
  EXPECT_EQ(format_significant(3.14159, 3), "3.14");
  EXPECT_EQ(format_fixed(2.5, 1), "2.5");
  std::setlocale(LC_NUMERIC, saved.c_str());
}

TEST(GroupThousands, SeparatesEveryThreeDigits) {
  EXPECT_EQ(group_thousands(0), "0");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(1000), "1,000");
  EXPECT_EQ(group_thousands(1000000), "1,000,000");
  EXPECT_EQ(group_thousands(-12345), "-12,345");
  EXPECT_EQ(group_thousands(-123), "-123");
}

// Tables once printed counts as "1.998e+05" parameters and "1e+06" admitted requests.
TEST(FormatForReading, LargeValuesAreWholeAndGroupedSmallOnesAsBefore) {
  EXPECT_EQ(format_for_reading(199800.0, 4), "199,800");
  EXPECT_EQ(format_for_reading(1e6, 4), "1,000,000");
  // A whole number is a count and exact: never rounded into another exact-looking count.
  EXPECT_EQ(format_for_reading(199849.0, 4), "199,849");
  EXPECT_EQ(format_for_reading(817612.0, 5), "817,612");
  EXPECT_EQ(format_for_reading(-123456.0, 3), "-123,456");
  // A fraction (a mean) is rounded to its significant digits, then grouped.
  EXPECT_EQ(format_for_reading(199849.5, 4), "199,800");
  EXPECT_EQ(format_for_reading(-123456.7, 3), "-123,000");
  EXPECT_EQ(format_for_reading(9999.4, 4), "9999");         // below 10,000: format_significant
  EXPECT_EQ(format_for_reading(0.000012345, 3), "1.23e-05");
  EXPECT_EQ(format_for_reading(2.5e18, 3), "2.5e+18");
  EXPECT_EQ(format_for_reading(std::nan(""), 4), "NaN");
}

TEST(XmlEscape, SpecialCharacters) {
  EXPECT_EQ(xml_escape("a < b & \"c\" > 'd'"), "a &lt; b &amp; &quot;c&quot; &gt; &apos;d&apos;");
  EXPECT_EQ(xml_escape("tab\there"), "tab\there");
  EXPECT_EQ(xml_escape(std::string("nul\0bell\a", 9)), "nul bell ");
}

TEST(XmlEscape, KeepsValidUtf8AndReplacesInvalid) {
  EXPECT_EQ(xml_escape("α → ✓ 😀"), "α → ✓ 😀");
  EXPECT_EQ(xml_escape("bad \xC3 end"), "bad \xEF\xBF\xBD end");      // truncated sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // overlong '/'
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  const std::string wrapped = "<t>" + xml_escape("x \x01\xFF<&>\xF4\x90\x80\x80") + "</t>";
  EXPECT_EQ(testing::xml_error(wrapped), "");
}

TEST(XmlChecker, RejectsBrokenDocuments) {
  // The checker must be able to fail, or the SVG well-formedness tests prove nothing.
  EXPECT_EQ(testing::xml_error("<a><b/></a>"), "");
  EXPECT_NE(testing::xml_error("<a><b></a>"), "");
  EXPECT_NE(testing::xml_error("<a>&</a>"), "");
  EXPECT_NE(testing::xml_error("<a>&bogus;</a>"), "");
  EXPECT_NE(testing::xml_error("<a x=1/>"), "");
  EXPECT_NE(testing::xml_error("<a x=\"1\" x=\"2\"/>"), "");
  EXPECT_NE(testing::xml_error("<a x=\"<\"/>"), "");
  EXPECT_NE(testing::xml_error("<a>"), "");
  EXPECT_NE(testing::xml_error("<a/><b/>"), "");
  EXPECT_NE(testing::xml_error("text<a/>"), "");
}

}  // namespace
}  // namespace k3lab::report
