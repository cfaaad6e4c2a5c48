// The report's Markdown subset as HTML: each construct the pages use, written out by hand, and what
// must stay text (raw HTML, unsafe links, unmatched markers).
#include <gtest/gtest.h>

#include <string>

#include "k3lab/report/markdown_html.hpp"

namespace k3lab::report {
namespace {

TEST(MarkdownHtml, InlineMarkupTheReportUses) {
  EXPECT_EQ(inline_markdown_html("End-task quality: **not measured**."),
            "End-task quality: <strong>not measured</strong>.");
  EXPECT_EQ(inline_markdown_html("resume with `k3lab run x --profile smoke`"),
            "resume with <code>k3lab run x --profile smoke</code>");
  EXPECT_EQ(inline_markdown_html("Data: [tables/a b.csv](tables/a%20b.csv)"),
            "Data: <a href=\"tables/a%20b.csv\">tables/a b.csv</a>");
  EXPECT_EQ(inline_markdown_html("**`code` in bold**"), "<strong><code>code</code> in bold</strong>");
  EXPECT_EQ(inline_markdown_html("see [the **docs**](https://example.org/x?a=1&b=2)"),
            "see <a href=\"https://example.org/x?a=1&amp;b=2\">the <strong>docs</strong></a>");
}

TEST(MarkdownHtml, EverythingElseStaysTextAndIsEscaped) {
  EXPECT_EQ(inline_markdown_html("<script>alert(1)</script> & \"q\""),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(inline_markdown_html("[x](javascript:alert(1))"), "[x](javascript:alert(1))");
  EXPECT_EQ(inline_markdown_html("max_completion_tokens = 1024; a*b; 2 ** 3"),
            "max_completion_tokens = 1024; a*b; 2 ** 3");
  EXPECT_EQ(inline_markdown_html("unclosed `tick and **star"), "unclosed `tick and **star");
  EXPECT_EQ(inline_markdown_html("\\*\\*literal\\*\\* and a|b"), "**literal** and a|b");
  EXPECT_EQ(inline_markdown_html("`<b>` in code"), "<code>&lt;b&gt;</code> in code");
}

TEST(MarkdownHtml, BlocksParagraphsHeadingsListsAndQuotes) {
  const std::string text =
      "### Mix steady-short\n\nShort chat traffic\nat a steady rate.\n\n- **fixed-split**: 505 slots\n"
      "- **unified**: one arena,\n  continued here\n\n> quoted line\n\nLast.";
  EXPECT_EQ(markdown_html(text),
            "<h3>Mix steady-short</h3>\n"
            "<p>Short chat traffic\nat a steady rate.</p>\n"
            "<ul>\n<li><strong>fixed-split</strong>: 505 slots</li>\n"
            "<li><strong>unified</strong>: one arena,\ncontinued here</li>\n</ul>\n"
            "<blockquote><p>quoted line</p>\n</blockquote>\n"
            "<p>Last.</p>\n");
  EXPECT_EQ(markdown_html("What it cannot say:\n\n- a\n- b\n"),
            "<p>What it cannot say:</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
  EXPECT_EQ(markdown_html("#no heading without a space"), "<p>#no heading without a space</p>\n");
  EXPECT_EQ(markdown_html(""), "");
}

// A relative link to another page's index.md opens its HTML rendering; every other URL is kept.
TEST(MarkdownHtml, RelativeLinksToMarkdownPagesOpenTheirHtmlPages) {
  EXPECT_EQ(inline_markdown_html("[page](runs/20260101-000000-abcdef/index.md)"),
            "<a href=\"runs/20260101-000000-abcdef/index.html\">page</a>");
  EXPECT_EQ(inline_markdown_html("[headline](../../index.md)"), "<a href=\"../../index.html\">headline</a>");
  EXPECT_EQ(inline_markdown_html("[x](index.md)"), "<a href=\"index.html\">x</a>");
  EXPECT_EQ(inline_markdown_html("[x](https://example.org/index.md)"), "<a href=\"https://example.org/index.md\">x</a>");
  EXPECT_EQ(inline_markdown_html("[x](notes/readme.md)"), "<a href=\"notes/readme.md\">x</a>");
  EXPECT_EQ(inline_markdown_html("[x](notes/myindex.md)"), "<a href=\"notes/myindex.md\">x</a>");
}

}  // namespace
}  // namespace k3lab::report
