#include "k3lab/validate/python_module.hpp"

#include <stdexcept>

#include "detail/text.hpp"

namespace k3lab::validate {
namespace {

using detail::trim;

// One logical line: string literals blanked to "", comments dropped, continuation lines joined by a space.
struct LogicalLine {
  std::size_t line = 0;    // 1-based line of its first physical line
  std::size_t indent = 0;  // columns before its first character (a tab advances to the next multiple of 8)
  std::string text;
};

class LineReader {
 public:
  explicit LineReader(std::string_view source) : src_(source) {}

  std::vector<LogicalLine> read() {
    while (i_ < src_.size()) {
      if (at_line_start_) {
        start_line();
        continue;
      }
      const char c = src_[i_];
      if (c == '#') {
        while (i_ < src_.size() && src_[i_] != '\n') ++i_;
      } else if (c == '\\' && next_is_newline(i_ + 1)) {
        i_ = src_.find('\n', i_) + 1;
        ++line_;
        text_ += ' ';
      } else if (c == '"' || c == '\'') {
        skip_string();
        text_ += "\"\"";
      } else if (c == '\n') {
        ++i_;
        ++line_;
        if (depth_ > 0) {
          text_ += ' ';
        } else {
          flush();
        }
      } else {
        if (c == '(' || c == '[' || c == '{') ++depth_;
        if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
        if (c != '\r') text_ += c;
        ++i_;
      }
    }
    flush();
    return std::move(lines_);
  }

 private:
  bool next_is_newline(std::size_t at) const {
    if (at < src_.size() && src_[at] == '\r') ++at;
    return at < src_.size() && src_[at] == '\n';
  }

  // Measures the indentation of a new logical line; blank and comment-only lines are skipped whole.
  void start_line() {
    std::size_t column = 0;
    while (i_ < src_.size() && (src_[i_] == ' ' || src_[i_] == '\t' || src_[i_] == '\f')) {
      column = src_[i_] == '\t' ? column + 8 - column % 8 : column + 1;
      ++i_;
    }
    if (i_ >= src_.size()) return;
    if (src_[i_] == '\n' || src_[i_] == '\r' || src_[i_] == '#') {
      while (i_ < src_.size() && src_[i_] != '\n') ++i_;
      if (i_ < src_.size()) {
        ++i_;
        ++line_;
      }
      return;
    }
    current_ = {line_, column, {}};
    at_line_start_ = false;
  }

  void skip_string() {
    const char quote = src_[i_];
    const bool triple = i_ + 2 < src_.size() && src_[i_ + 1] == quote && src_[i_ + 2] == quote;
    i_ += triple ? 3 : 1;
    while (i_ < src_.size()) {
      const char c = src_[i_];
      if (c == '\\' && i_ + 1 < src_.size()) {
        if (src_[i_ + 1] == '\n') ++line_;
        i_ += 2;
        continue;
      }
      if (c == '\n') {
        if (!triple) return;  // an unterminated one-line string ends with its line
        ++line_;
      }
      if (c == quote && (!triple || (i_ + 2 < src_.size() && src_[i_ + 1] == quote && src_[i_ + 2] == quote))) {
        i_ += triple ? 3 : 1;
        return;
      }
      ++i_;
    }
  }

  void flush() {
    if (!trim(text_).empty()) {
      current_.text = std::move(text_);
      lines_.push_back(std::move(current_));
    }
    text_.clear();
    at_line_start_ = true;
    depth_ = 0;
  }

  std::string_view src_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t depth_ = 0;
  bool at_line_start_ = true;
  std::string text_;
  LogicalLine current_;
  std::vector<LogicalLine> lines_;
};

bool is_identifier_char(char c) { return detail::is_alnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80; }

bool is_identifier(std::string_view text) {
  if (text.empty() || detail::is_digit(text[0])) return false;
  for (char c : text)
    if (!is_identifier_char(c)) return false;
  return true;
}

// `text` starts with the keyword `word` followed by a non-identifier character (or ends).
bool starts_with_word(std::string_view text, std::string_view word) {
  return text.substr(0, word.size()) == word && (text.size() == word.size() || !is_identifier_char(text[word.size()]));
}

std::string_view leading_identifier(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && is_identifier_char(text[end])) ++end;
  return text.substr(0, end);
}

// Splits at `separator` outside brackets (string literals are already blanked).
std::vector<std::string_view> split_top_level(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == separator && depth == 0) {
      parts.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  parts.push_back(text.substr(begin));
  return parts;
}

// Position of the first `ch` outside brackets, or npos.
std::size_t find_top_level(std::string_view text, char ch) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ch && depth == 0) return i;
  }
  return std::string_view::npos;
}

std::string_view strip_brackets(std::string_view text) {
  text = trim(text);
  while (text.size() >= 2 && ((text.front() == '(' && text.back() == ')') || (text.front() == '[' && text.back() == ']')))
    text = trim(text.substr(1, text.size() - 2));
  return text;
}

bool is_augmented_operator(std::string_view text, std::size_t equals) {
  if (equals == 0) return false;
  const char before = text[equals - 1];
  if (std::string_view("+-*/%&|^@").find(before) != std::string_view::npos) return true;
  // ">>=" and "<<=" (but not ">=" or "<=").
  return (before == '>' || before == '<') && equals >= 2 && text[equals - 2] == before;
}

enum class Block { none, body, compound };

class ModuleReader {
 public:
  explicit ModuleReader(PythonModule& module) : module_(module) {}

  Block statement(std::string_view text, std::size_t line, bool conditional) {
    Block block = Block::none;
    for (std::string_view part : split_top_level(text, ';')) {
      const Block b = simple_or_compound(trim(part), line, conditional);
      if (b != Block::none) block = b;
    }
    return block;
  }

 private:
  void bind(std::string_view name, PythonBinding::Kind kind, std::size_t line, bool conditional) {
    PythonBinding binding;
    binding.name = std::string(name);
    binding.kind = kind;
    binding.line = line;
    binding.conditional = conditional;
    module_.bindings.push_back(std::move(binding));
  }

  Block simple_or_compound(std::string_view s, std::size_t line, bool conditional) {
    if (s.empty() || s.front() == '@') return Block::none;
    if (starts_with_word(s, "async")) s = trim(s.substr(5));
    if (starts_with_word(s, "def")) {
      function(trim(s.substr(3)), line, conditional);
      return Block::body;
    }
    if (starts_with_word(s, "class")) {
      bind(leading_identifier(trim(s.substr(5))), PythonBinding::Kind::class_definition, line, conditional);
      return Block::body;
    }
    if (starts_with_word(s, "from")) return import_from(trim(s.substr(4)), line, conditional), Block::none;
    if (starts_with_word(s, "import")) return import_modules(trim(s.substr(6)), line, conditional), Block::none;
    for (std::string_view keyword : {"if", "elif", "else", "try", "except", "finally", "for", "while", "with"}) {
      if (starts_with_word(s, keyword)) return compound(s, keyword, line);
    }
    if (starts_with_word(s, "del")) {
      for (std::string_view target : split_top_level(s.substr(3), ',')) {
        if (is_identifier(strip_brackets(target)))
          bind(strip_brackets(target), PythonBinding::Kind::deletion, line, conditional);
      }
      return Block::none;
    }
    assignment(s, line, conditional);
    return Block::none;
  }

  void function(std::string_view rest, std::size_t line, bool conditional) {
    const std::string_view name = leading_identifier(rest);
    bind(name, PythonBinding::Kind::function, line, conditional);
    const std::size_t open = rest.find('(');
    if (open == std::string_view::npos) return;
    int depth = 0;
    std::size_t close = open;
    for (; close < rest.size(); ++close) {
      if (rest[close] == '(' || rest[close] == '[' || rest[close] == '{') ++depth;
      if ((rest[close] == ')' || rest[close] == ']' || rest[close] == '}') && --depth == 0) break;
    }
    for (std::string_view parameter : split_top_level(rest.substr(open + 1, close - open - 1), ',')) {
      parameter = trim(parameter);
      const std::size_t colon = find_top_level(parameter, ':');
      const std::size_t equals = find_top_level(parameter, '=');
      parameter = trim(parameter.substr(0, std::min(colon, equals)));
      if (parameter.empty() || parameter == "*" || parameter == "/") continue;
      module_.bindings.back().parameters.emplace_back(parameter);
    }
  }

  // "M import a as b, (c, d)" after "from".
  void import_from(std::string_view rest, std::size_t line, bool conditional) {
    std::size_t split = rest.find(" import");
    while (split != std::string_view::npos && !starts_with_word(rest.substr(split + 1), "import"))
      split = rest.find(" import", split + 1);
    if (split == std::string_view::npos) return;
    const std::string source = resolve_module(trim(rest.substr(0, split)));
    for (std::string_view item : split_top_level(strip_brackets(rest.substr(split + 7)), ',')) {
      item = trim(item);
      if (item.empty()) continue;
      if (item == "*") {
        module_.has_star_import = true;
        continue;
      }
      const std::size_t as = item.find(" as ");
      const std::string_view name = trim(item.substr(0, as));
      const std::string_view alias = as == std::string_view::npos ? name : trim(item.substr(as + 4));
      bind(alias, PythonBinding::Kind::import_from, line, conditional);
      module_.bindings.back().source_module = source;
      module_.bindings.back().source_name = std::string(name);
    }
  }

  // "a.b as c, d.e" after "import": `import d.e` binds d.
  void import_modules(std::string_view rest, std::size_t line, bool conditional) {
    for (std::string_view item : split_top_level(rest, ',')) {
      item = trim(item);
      const std::size_t as = item.find(" as ");
      const std::string_view dotted = trim(item.substr(0, as));
      const std::string_view bound = as == std::string_view::npos ? dotted.substr(0, dotted.find('.')) : trim(item.substr(as + 4));
      if (!is_identifier(bound)) continue;
      bind(bound, PythonBinding::Kind::import_module, line, conditional);
      module_.bindings.back().source_module = std::string(dotted);
    }
  }

  // ".numbers" from package sympy.core -> "sympy.core.numbers"; absolute names are kept.
  std::string resolve_module(std::string_view relative) const {
    std::size_t level = 0;
    while (level < relative.size() && relative[level] == '.') ++level;
    const std::string_view rest = trim(relative.substr(level));
    if (level == 0) return std::string(rest);
    std::string package = module_.is_package ? module_.name : module_.name.substr(0, module_.name.rfind('.'));
    for (std::size_t up = 1; up < level; ++up) {
      const std::size_t dot = package.rfind('.');
      if (dot == std::string::npos) return std::string(relative);  // above the top package: unresolvable
      package.resize(dot);
    }
    return rest.empty() ? package : package + "." + std::string(rest);
  }

  Block compound(std::string_view s, std::string_view keyword, std::size_t line) {
    const std::size_t colon = find_top_level(s, ':');
    const std::string_view header = s.substr(0, colon);
    if (keyword == "for") {
      const std::size_t in = header.find(" in ");
      targets(header.substr(3, in == std::string_view::npos ? 0 : in - 3), line);
    } else if (keyword == "with" || keyword == "except") {
      for (std::string_view item : split_top_level(header.substr(keyword.size()), ',')) {
        const std::size_t as = item.find(" as ");
        if (as != std::string_view::npos) targets(item.substr(as + 4), line);
      }
    }
    if (colon != std::string_view::npos && !trim(s.substr(colon + 1)).empty())
      statement(trim(s.substr(colon + 1)), line, true);
    return Block::compound;
  }

  // Binds every plain name among assignment targets ("a, (b, *c)"); attributes and subscripts bind nothing.
  void targets(std::string_view text, std::size_t line, bool conditional = true) {
    for (std::string_view target : split_top_level(text, ',')) {
      target = trim(target);
      if (!target.empty() && target.front() == '*') target = trim(target.substr(1));
      const bool bracketed = target.size() >= 2 && ((target.front() == '(' && target.back() == ')') ||
                                                    (target.front() == '[' && target.back() == ']'));
      if (bracketed) {
        targets(target.substr(1, target.size() - 2), line, conditional);
      } else if (is_identifier(target)) {
        bind(target, PythonBinding::Kind::assignment, line, conditional);
      }
    }
  }

  void assignment(std::string_view s, std::size_t line, bool conditional) {
    int depth = 0;
    std::size_t begin = 0;
    std::vector<std::string_view> target_parts;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c != '=' || depth != 0) continue;
      const char before = i > 0 ? s[i - 1] : ' ';
      const char after = i + 1 < s.size() ? s[i + 1] : ' ';
      if (after == '=' || before == '=' || before == '!' || before == ':') continue;
      if (is_augmented_operator(s, i)) {
        std::string_view target = s.substr(0, i);
        target = trim(target.substr(0, target.find_last_not_of("+-*/%&|^@<>") + 1));
        if (is_identifier(target)) bind(target, PythonBinding::Kind::assignment, line, conditional);
        return;
      }
      if (before == '<' || before == '>') continue;  // a comparison
      target_parts.push_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
    for (std::string_view part : target_parts) {
      const std::size_t colon = find_top_level(part, ':');  // an annotation: "x: int = 5"
      targets(part.substr(0, colon), line, conditional);
    }
  }

  PythonModule& module_;
};

}  // namespace

const PythonBinding* PythonModule::unique_binding(std::string_view wanted) const {
  const PythonBinding* found = nullptr;
  for (const auto& binding : bindings) {
    if (binding.name != wanted) continue;
    if (found != nullptr || binding.conditional) return nullptr;
    found = &binding;
  }
  return found;
}

std::string python_module_name(std::string_view path) {
  if (path.size() < 4 || path.substr(path.size() - 3) != ".py") {
    throw std::invalid_argument("python_module_name: \"" + std::string(path) + "\" is not a .py file");
  }
  std::string name(path.substr(0, path.size() - 3));
  for (char& c : name)
    if (c == '/') c = '.';
  constexpr std::string_view kInit = ".__init__";
  if (name.size() > kInit.size() && name.substr(name.size() - kInit.size()) == kInit) name.resize(name.size() - kInit.size());
  return name;
}

PythonModule analyze_python_module(std::string path, std::string_view source) {
  PythonModule module;
  module.name = python_module_name(path);
  module.is_package = path.size() >= 11 && path.substr(path.size() - 11) == "__init__.py";
  module.path = std::move(path);
  ModuleReader reader(module);
  Block block = Block::none;
  std::size_t skip_deeper_than = std::string::npos;  // a def/class body inside a top-level block
  for (const LogicalLine& line : LineReader(source).read()) {
    if (line.indent == 0) {
      skip_deeper_than = std::string::npos;
      block = reader.statement(line.text, line.line, false);
      continue;
    }
    if (block != Block::compound) continue;
    if (skip_deeper_than != std::string::npos && line.indent > skip_deeper_than) continue;
    skip_deeper_than = std::string::npos;
    if (reader.statement(trim(line.text), line.line, true) == Block::body) skip_deeper_than = line.indent;
  }
  return module;
}

}  // namespace k3lab::validate
