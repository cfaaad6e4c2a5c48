#include "k3lab/api/error_class.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "ascii_lower.hpp"

namespace k3lab::api {
namespace {

struct ErrorBody {
  std::string type;
  std::string message;
};

ErrorBody parse_error_body(std::string_view body) {
  ErrorBody out;
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return out;
  const nlohmann::json* err = &json;
  if (const auto it = json.find("error"); it != json.end()) {
    if (it->is_object()) {
      err = &*it;
    } else if (it->is_string()) {
      out.message = it->get<std::string>();
      return out;
    }
  }
  if (const auto t = err->find("type"); t != err->end() && t->is_string()) out.type = t->get<std::string>();
  if (const auto c = err->find("code"); out.type.empty() && c != err->end() && c->is_string()) {
    out.type = c->get<std::string>();
  }
  if (const auto m = err->find("message"); m != err->end() && m->is_string()) {
    out.message = m->get<std::string>();
  }
  return out;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool says_quota(const std::string& type, const std::string& message) {
  return type == "exceeded_current_quota_error" || type == "insufficient_quota" ||
         contains(message, "insufficient balance") || contains(message, "exceeded your current quota") ||
         contains(message, "suspended due to insufficient");
}

bool says_overload(const std::string& type, const std::string& message) {
  return type == "engine_overloaded_error" || type == "overloaded_error" || contains(message, "overloaded");
}

}  // namespace

std::string_view to_string(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::none: return "none";
    case ErrorClass::transport: return "transport";
    case ErrorClass::server: return "server";
    case ErrorClass::rate_limit: return "rate_limit";
    case ErrorClass::overload: return "overload";
    case ErrorClass::auth: return "auth";
    case ErrorClass::quota: return "quota";
    case ErrorClass::invalid_request: return "invalid_request";
    case ErrorClass::content_filter: return "content_filter";
    case ErrorClass::not_found: return "not_found";
    case ErrorClass::unknown: return "unknown";
  }
  return "unknown";
}

ErrorClass classify_stream_error(std::string_view type_in, std::string_view message_in) {
  const std::string type = ascii_lower(type_in);
  const std::string message = ascii_lower(message_in);
  if (type == "content_filter") return ErrorClass::content_filter;
  if (says_quota(type, message)) return ErrorClass::quota;
  if (says_overload(type, message)) return ErrorClass::overload;
  if (contains(type, "rate_limit")) return ErrorClass::rate_limit;
  if (contains(type, "authentication") || type == "incorrect_api_key_error" ||
      type == "permission_denied_error" || type == "access_terminated_error") {
    return ErrorClass::auth;
  }
  if (type == "invalid_request_error") return ErrorClass::invalid_request;
  // An unnamed failure in the middle of a stream is the server's, and worth one more try.
  return ErrorClass::server;
}

ErrorClass classify(int status, std::string_view body) {
  if (status >= 200 && status < 300) return ErrorClass::none;
  const ErrorBody parsed = parse_error_body(body);
  const std::string type = ascii_lower(parsed.type);
  const std::string message = ascii_lower(parsed.message);

  if (type == "content_filter") return ErrorClass::content_filter;
  if (status == 402 || says_quota(type, message)) return ErrorClass::quota;
  switch (status) {
    case 400:
    case 422: return ErrorClass::invalid_request;
    case 401:
    case 403: return ErrorClass::auth;
    case 404: return ErrorClass::not_found;
    case 408: return ErrorClass::transport;
    case 429: return says_overload(type, message) ? ErrorClass::overload : ErrorClass::rate_limit;
    case 503:
    case 529: return ErrorClass::overload;
    default: break;
  }
  if (status >= 500 && status < 600) return ErrorClass::server;
  return ErrorClass::unknown;
}

bool is_transport_retryable(ErrorClass c) { return c == ErrorClass::transport || c == ErrorClass::server; }

bool is_overload_retryable(ErrorClass c) { return c == ErrorClass::rate_limit || c == ErrorClass::overload; }

std::string error_message_of(std::string_view body) {
  const ErrorBody parsed = parse_error_body(body);
  if (!parsed.message.empty()) return parsed.message;
  return std::string(body.substr(0, 300));
}

}  // namespace k3lab::api
