// Built when PCRE2 was not found at configure time: the pre-tokenizer explains how to get it.
#include <stdexcept>

#include "k3lab/api/pretokenizer.hpp"

namespace k3lab::api {

struct PreTokenizer::Impl {
  std::string pattern;
};

PreTokenizer::PreTokenizer(std::string) {
  throw std::runtime_error(
      "k3lab was built without PCRE2, so the BPE tokenizer is unavailable: install libpcre2-dev and reconfigure "
      "(token budgets without a vocabulary still work: see token_estimate.hpp)");
}
PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
const std::string& PreTokenizer::pattern() const { return impl_->pattern; }
std::vector<std::string_view> PreTokenizer::split(std::string_view) const { return {}; }

}  // namespace k3lab::api
