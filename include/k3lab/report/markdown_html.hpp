#pragma once
// The Markdown that report text is written in (Page text blocks, captions, can say / cannot say items)
// rendered as HTML for the report's HTML pages. Only the subset the pages use is interpreted:
//   blocks: paragraphs (separated by blank lines), "#".."######" headings, "- " or "* " bullet lists
//           (indented lines continue an item), "> " quotes;
//   inline: **strong**, `code`, [text](url) with a relative, http(s) or mailto url, backslash escapes.
// Everything else, including any HTML in the text, is shown as written (escaped), never interpreted,
// so recorded strings cannot inject markup. Deterministic: the same text gives the same bytes.
#include <string>
#include <string_view>

namespace k3lab::report {

// One line of inline text (no block structure) as HTML; newlines become spaces in the browser.
std::string inline_markdown_html(std::string_view text);

// Block text as HTML: one element per paragraph, heading, list or quote, each on its own line.
std::string markdown_html(std::string_view text);

}  // namespace k3lab::report
