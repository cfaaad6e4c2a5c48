#include "xml_check.hpp"

#include <set>
#include <vector>

namespace k3lab::report::testing {

namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Checker {
 public:
  explicit Checker(std::string_view xml) : xml_(xml) {}

  std::string run() {
    while (pos_ < xml_.size()) {
      if (xml_[pos_] == '<') {
        if (!markup()) return error_;
      } else {
        if (!text()) return error_;
      }
    }
    if (!stack_.empty()) return "unclosed element <" + stack_.back() + "> at end of document";
    if (roots_ != 1) return "expected exactly one root element, found " + std::to_string(roots_);
    return "";
  }

 private:
  bool fail(const std::string& what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }

  bool starts(std::string_view s) const { return xml_.substr(pos_, s.size()) == s; }

  bool entity() {  // at '&'
    const std::size_t end = xml_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 12) return fail("'&' without a terminated entity reference");
    const std::string_view body = xml_.substr(pos_ + 1, end - pos_ - 1);
    static const std::set<std::string_view> named = {"amp", "lt", "gt", "quot", "apos"};
    bool ok = named.count(body) > 0;
    if (!ok && body.size() >= 2 && body[0] == '#') {
      const bool hex = body[1] == 'x';
      ok = body.size() > (hex ? 2u : 1u);
      for (std::size_t i = hex ? 2 : 1; ok && i < body.size(); ++i) {
        const char c = body[i];
        ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
      }
    }
    if (!ok) return fail("unknown entity '&" + std::string(body) + ";'");
    pos_ = end + 1;
    return true;
  }

  bool text() {
    while (pos_ < xml_.size() && xml_[pos_] != '<') {
      const char c = xml_[pos_];
      if (c == '&') {
        if (!entity()) return false;
        continue;
      }
      if (stack_.empty() && !is_space(c)) return fail("text outside the root element");
      if (static_cast<unsigned char>(c) < 0x20 && !is_space(c)) return fail("control character in text");
      ++pos_;
    }
    return true;
  }

  bool name(std::string& out) {
    if (pos_ >= xml_.size() || !is_name_start(xml_[pos_])) return fail("expected a name");
    const std::size_t start = pos_;
    while (pos_ < xml_.size() && is_name_char(xml_[pos_])) ++pos_;
    out = std::string(xml_.substr(start, pos_ - start));
    return true;
  }

  void spaces() {
    while (pos_ < xml_.size() && is_space(xml_[pos_])) ++pos_;
  }

  bool markup() {
    if (starts("<!--")) {
      const std::size_t end = xml_.find("-->", pos_ + 4);
      if (end == std::string_view::npos) return fail("unterminated comment");
      pos_ = end + 3;
      return true;
    }
    if (starts("<?")) {
      const std::size_t end = xml_.find("?>", pos_ + 2);
      if (end == std::string_view::npos) return fail("unterminated processing instruction");
      pos_ = end + 2;
      return true;
    }
    if (starts("</")) {
      pos_ += 2;
      std::string tag;
      if (!name(tag)) return false;
      spaces();
      if (pos_ >= xml_.size() || xml_[pos_] != '>') return fail("expected '>' closing </" + tag);
      ++pos_;
      if (stack_.empty() || stack_.back() != tag) {
        return fail("</" + tag + "> does not match <" + (stack_.empty() ? std::string("(none)") : stack_.back()) + ">");
      }
      stack_.pop_back();
      return true;
    }
    ++pos_;
    std::string tag;
    if (!name(tag)) return false;
    if (stack_.empty()) {
      if (++roots_ > 1) return fail("second root element <" + tag + ">");
    }
    std::set<std::string> attributes;
    for (;;) {
      const std::size_t before = pos_;
      spaces();
      if (pos_ >= xml_.size()) return fail("unterminated tag <" + tag + ">");
      if (starts("/>")) {
        pos_ += 2;
        return true;
      }
      if (xml_[pos_] == '>') {
        ++pos_;
        stack_.push_back(tag);
        return true;
      }
      if (pos_ == before) return fail("attributes of <" + tag + "> must be separated by whitespace");
      std::string attribute;
      if (!name(attribute)) return false;
      if (!attributes.insert(attribute).second) return fail("attribute '" + attribute + "' repeated");
      spaces();
      if (pos_ >= xml_.size() || xml_[pos_] != '=') return fail("attribute '" + attribute + "' without '='");
      ++pos_;
      spaces();
      if (pos_ >= xml_.size() || (xml_[pos_] != '"' && xml_[pos_] != '\'')) {
        return fail("attribute '" + attribute + "' value not quoted");
      }
      const char quote = xml_[pos_++];
      while (pos_ < xml_.size() && xml_[pos_] != quote) {
        if (xml_[pos_] == '<') return fail("'<' inside attribute '" + attribute + "'");
        if (xml_[pos_] == '&') {
          if (!entity()) return false;
        } else {
          ++pos_;
        }
      }
      if (pos_ >= xml_.size()) return fail("unterminated value of attribute '" + attribute + "'");
      ++pos_;
    }
  }

  std::string_view xml_;
  std::size_t pos_ = 0;
  std::vector<std::string> stack_;
  int roots_ = 0;
  std::string error_;
};

}  // namespace

std::string xml_error(std::string_view xml) { return Checker(xml).run(); }

}  // namespace k3lab::report::testing
