#include "k3lab/api/redact.hpp"

#include <unordered_set>

namespace k3lab::api {
namespace {

constexpr std::size_t kWindow = 8;

bool key_like(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string replace_all(std::string_view text, std::string_view secret) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = text.find(secret, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(kRedacted);
    pos = hit + secret.size();
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string redact(std::string_view text, std::string_view secret) {
  if (secret.empty()) return std::string(text);
  std::string whole = replace_all(text, secret);
  if (secret.size() < kWindow) return whole;

  std::unordered_set<std::string_view> windows;
  for (std::size_t i = 0; i + kWindow <= secret.size(); ++i) windows.insert(secret.substr(i, kWindow));

  std::string out;
  out.reserve(whole.size());
  std::size_t i = 0;
  while (i < whole.size()) {
    if (!key_like(whole[i])) {
      out.push_back(whole[i++]);
      continue;
    }
    std::size_t j = i;
    while (j < whole.size() && key_like(whole[j])) ++j;
    const std::string_view run(whole.data() + i, j - i);
    bool shares = false;
    for (std::size_t k = 0; !shares && k + kWindow <= run.size(); ++k) {
      shares = windows.count(run.substr(k, kWindow)) > 0;
    }
    if (shares) {
      out.append(kRedacted);
    } else {
      out.append(run);
    }
    i = j;
  }
  return out;
}

}  // namespace k3lab::api
