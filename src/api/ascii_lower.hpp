#pragma once
// ASCII lower-casing for header names, URL schemes and error types (the C locale, never the host's).
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace k3lab::api {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace k3lab::api
