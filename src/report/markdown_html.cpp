// The report's Markdown subset as HTML (include/k3lab/report/markdown_html.hpp).
#include "k3lab/report/markdown_html.hpp"

#include <cstddef>
#include <string>
#include <vector>

#include "k3lab/report/svg.hpp"

namespace k3lab::report {

namespace {

bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// Links may point at files of the report or at the web, never run script (javascript:, data:).
bool is_safe_url(std::string_view url) {
  if (url.empty() || url.find_first_of(" \t\n<>\"") != std::string_view::npos) return false;
  const auto colon = url.find(':');
  const auto slash = url.find('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon)) return true;
  const std::string_view scheme = url.substr(0, colon);
  return scheme == "http" || scheme == "https" || scheme == "mailto";
}

// Plain text accumulates here and is escaped as one run (xml_escape checks UTF-8 over whole sequences).
class InlineWriter {
 public:
  void text(char c) { pending_ += c; }
  void text(std::string_view s) { pending_ += s; }
  void markup(const std::string& html) {
    flush();
    out_ += html;
  }
  std::string finish() {
    flush();
    return std::move(out_);
  }

 private:
  void flush() {
    out_ += xml_escape(pending_);
    pending_.clear();
  }
  std::string out_;
  std::string pending_;
};

struct Link {
  std::string_view label;
  std::string_view url;
  std::size_t end = 0;  // one past the closing ')'
};

// "[label](url)" starting at `open` (a '['), or nothing when the text there is not such a link.
bool parse_link(std::string_view text, std::size_t open, Link& link) {
  const auto close = text.find("](", open + 1);
  if (close == std::string_view::npos || text.substr(open + 1, close - open - 1).find('[') != std::string_view::npos) {
    return false;
  }
  const auto end = text.find(')', close + 2);
  if (end == std::string_view::npos) return false;
  link.label = text.substr(open + 1, close - open - 1);
  link.url = text.substr(close + 2, end - close - 2);
  link.end = end + 1;
  return !link.label.empty() && is_safe_url(link.url);
}

// A relative link to another page's index.md opens that page's HTML rendering (every page has both);
// any other URL is kept as written.
std::string html_target(std::string_view url) {
  constexpr std::string_view kMarkdownPage = "index.md";
  const bool relative = url.find(':') == std::string_view::npos && url.rfind('/', 0) != 0;
  const bool page = url == kMarkdownPage ||
                    (url.size() > kMarkdownPage.size() && url.substr(url.size() - kMarkdownPage.size() - 1) == "/index.md");
  if (!relative || !page) return std::string(url);
  return std::string(url.substr(0, url.size() - kMarkdownPage.size())) + "index.html";
}

// Lines of one block joined by "\n", the markers already stripped.
struct BlockText {
  enum class Kind { Paragraph, Heading, List, Quote };
  Kind kind = Kind::Paragraph;
  int level = 0;                   // heading level
  std::vector<std::string> items;  // list items; one entry for the other kinds
};

std::string_view trim_left(std::string_view line) {
  const auto first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? std::string_view() : line.substr(first);
}

int heading_level(std::string_view line) {
  int level = 0;
  while (level < static_cast<int>(line.size()) && line[static_cast<std::size_t>(level)] == '#') ++level;
  const bool followed_by_space =
      static_cast<std::size_t>(level) < line.size() && line[static_cast<std::size_t>(level)] == ' ';
  return level >= 1 && level <= 6 && followed_by_space ? level : 0;
}

bool is_bullet(std::string_view line) {
  return line.size() >= 2 && (line[0] == '-' || line[0] == '*') && line[1] == ' ';
}

std::vector<BlockText> split_blocks(std::string_view text) {
  std::vector<BlockText> blocks;
  bool open = false;  // the last block still takes lines
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    const std::string_view content = trim_left(line);
    if (content.empty()) {
      open = false;
    } else if (const int level = heading_level(line); level > 0) {
      blocks.push_back({BlockText::Kind::Heading, level, {std::string(trim_left(line.substr(level)))}});
      open = false;
    } else if (is_bullet(line)) {
      if (!open || blocks.back().kind != BlockText::Kind::List) blocks.push_back({BlockText::Kind::List, 0, {}});
      blocks.back().items.emplace_back(line.substr(2));
      open = true;
    } else if (line.rfind("> ", 0) == 0 || line == ">") {
      const std::string_view quoted = line.size() > 2 ? line.substr(2) : std::string_view();
      if (!open || blocks.back().kind != BlockText::Kind::Quote) {
        blocks.push_back({BlockText::Kind::Quote, 0, {std::string(quoted)}});
      } else {
        blocks.back().items.back() += "\n" + std::string(quoted);
      }
      open = true;
    } else if (open) {
      blocks.back().items.back() += "\n" + std::string(content);  // continuation of a paragraph or item
    } else {
      blocks.push_back({BlockText::Kind::Paragraph, 0, {std::string(content)}});
      open = true;
    }
    if (end == text.size()) break;
  }
  return blocks;
}

}  // namespace

std::string inline_markdown_html(std::string_view text) {
  InlineWriter out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && is_ascii_punctuation(text[i + 1])) {
      out.text(text[i + 1]);
      i += 2;
    } else if (c == '`') {
      const auto close = text.find('`', i + 1);
      if (close == std::string_view::npos) {
        out.text(text.substr(i));
        break;
      }
      out.markup("<code>" + xml_escape(text.substr(i + 1, close - i - 1)) + "</code>");
      i = close + 1;
    } else if (c == '*' && text.substr(i, 2) == "**") {
      const auto close = text.find("**", i + 2);
      if (close == std::string_view::npos || close == i + 2) {
        out.text("**");
        i += 2;
        continue;
      }
      out.markup("<strong>" + inline_markdown_html(text.substr(i + 2, close - i - 2)) + "</strong>");
      i = close + 2;
    } else if (Link link; c == '[' && parse_link(text, i, link)) {
      out.markup("<a href=\"" + xml_escape(html_target(link.url)) + "\">" + inline_markdown_html(link.label) + "</a>");
      i = link.end;
    } else {
      out.text(c);
      ++i;
    }
  }
  return out.finish();
}

std::string markdown_html(std::string_view text) {
  std::string html;
  for (const BlockText& block : split_blocks(text)) {
    switch (block.kind) {
      case BlockText::Kind::Paragraph:
        html += "<p>" + inline_markdown_html(block.items.front()) + "</p>\n";
        break;
      case BlockText::Kind::Heading: {
        const std::string tag = "h" + std::to_string(block.level);
        html += "<" + tag + ">" + inline_markdown_html(block.items.front()) + "</" + tag + ">\n";
        break;
      }
      case BlockText::Kind::List:
        html += "<ul>\n";
        for (const std::string& item : block.items) html += "<li>" + inline_markdown_html(item) + "</li>\n";
        html += "</ul>\n";
        break;
      case BlockText::Kind::Quote:
        html += "<blockquote>" + markdown_html(block.items.front()) + "</blockquote>\n";
        break;
    }
  }
  return html;
}

}  // namespace k3lab::report
