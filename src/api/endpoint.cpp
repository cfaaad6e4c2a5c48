#include "k3lab/api/endpoint.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>

#include "ascii_lower.hpp"

namespace k3lab::api {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct CurlStringDeleter {
  void operator()(char* s) const { curl_free(s); }
};

// One part of a parsed URL; empty when absent.
std::string url_part(CURLU* url, CURLUPart part) {
  char* raw = nullptr;
  if (curl_url_get(url, part, &raw, 0) != CURLUE_OK || raw == nullptr) return {};
  std::unique_ptr<char, CurlStringDeleter> owned(raw);
  return std::string(raw);
}

}  // namespace

bool is_loopback_host(std::string_view host_in) {
  std::string host = ascii_lower(host_in);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    static const in6_addr loopback = IN6ADDR_LOOPBACK_INIT;
    return std::equal(std::begin(v6.s6_addr), std::end(v6.s6_addr), std::begin(loopback.s6_addr));
  }
  return false;
}

Endpoint parse_endpoint(std::string_view base_url) {
  const std::string text(base_url);
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  if (!url) throw std::runtime_error("libcurl could not allocate a URL handle");
  if (curl_url_set(url.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    throw std::invalid_argument("base URL '" + text +
                                "' is not a valid absolute URL; expected e.g. https://api.moonshot.ai/v1");
  }
  Endpoint ep;
  ep.scheme = ascii_lower(url_part(url.get(), CURLUPART_SCHEME));
  ep.host = url_part(url.get(), CURLUPART_HOST);
  if (ep.host.size() >= 2 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.scheme != "http" && ep.scheme != "https") {
    throw std::invalid_argument("base URL '" + text + "' must use https (or http for a loopback mock)");
  }
  if (!url_part(url.get(), CURLUPART_USER).empty() || !url_part(url.get(), CURLUPART_PASSWORD).empty()) {
    throw std::invalid_argument(
        "base URL carries credentials; remove them and put the key in the MOONSHOT_API_KEY environment "
        "variable");
  }
  if (!url_part(url.get(), CURLUPART_QUERY).empty() || !url_part(url.get(), CURLUPART_FRAGMENT).empty()) {
    throw std::invalid_argument("base URL '" + text + "' must not have a query or fragment");
  }
  ep.loopback = is_loopback_host(ep.host);
  if (ep.scheme == "http" && !ep.loopback) {
    throw std::invalid_argument("base URL '" + text +
                                "' uses plain http for a non-loopback host; use https (plain http is "
                                "only allowed for 127.0.0.0/8, ::1 and localhost)");
  }
  std::string normalized = url_part(url.get(), CURLUPART_URL);
  while (!normalized.empty() && normalized.back() == '/') normalized.pop_back();
  ep.base_url = normalized;
  return ep;
}

}  // namespace k3lab::api
