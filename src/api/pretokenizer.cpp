#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "k3lab/api/pretokenizer.hpp"

namespace k3lab::api {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* m) const { pcre2_match_context_free(m); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* s) const { pcre2_jit_stack_free(s); }
};

}  // namespace

struct PreTokenizer::Impl {
  std::string pattern;
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

PreTokenizer::PreTokenizer(std::string pattern) : impl_(std::make_unique<Impl>()) {
  impl_->pattern = std::move(pattern);
  int error = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(impl_->pattern.data()), impl_->pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (!impl_->code) {
    throw std::invalid_argument("pre-tokenizer pattern does not compile at offset " + std::to_string(offset) + ": " +
                                pcre2_message(error));
  }
  // JIT is an optimisation only: without it (some builds lack it) the interpreter gives the same matches.
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

const std::string& PreTokenizer::pattern() const { return impl_->pattern; }

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(pcre2_match_data_create_from_pattern(impl_->code, nullptr));
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context(pcre2_match_context_create(nullptr));
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack;
  if (!match || !context) throw std::runtime_error("PCRE2 could not allocate match data");
  if (impl_->jit) {
    stack.reset(pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr));
    if (stack) pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
  }
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  PCRE2_SIZE pos = 0;
  uint32_t options = 0;  // the first call validates the UTF-8 of the whole text; later calls skip it
  while (pos < text.size()) {
    const int rc = pcre2_match(impl_->code, subject, text.size(), pos, options, match.get(), context.get());
    if (rc == PCRE2_ERROR_NOMATCH) {
      throw std::invalid_argument("pre-tokenizer pattern matches nothing from byte " + std::to_string(pos) +
                                  "; the pattern must cover all text");
    }
    if (rc < 0) {
      if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
        throw std::invalid_argument("text is not valid UTF-8 near byte " +
                                    std::to_string(pcre2_get_ovector_pointer(match.get())[0]) + ": " + pcre2_message(rc));
      }
      throw std::runtime_error("pre-tokenizer match failed at byte " + std::to_string(pos) + ": " + pcre2_message(rc));
    }
    options = PCRE2_NO_UTF_CHECK;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const PCRE2_SIZE begin = ovector[0];
    const PCRE2_SIZE end = ovector[1];
    if (begin != pos) {
      throw std::invalid_argument("pre-tokenizer pattern skips bytes [" + std::to_string(pos) + ", " +
                                  std::to_string(begin) + "); the pattern must cover all text");
    }
    if (end == begin) {
      throw std::invalid_argument("pre-tokenizer pattern matched an empty string at byte " + std::to_string(pos) +
                                  "; every alternative must consume at least one character");
    }
    pieces.emplace_back(text.substr(begin, end - begin));
    pos = end;
  }
  return pieces;
}

}  // namespace k3lab::api
