// classify() per status and body, with the Kimi error bodies from api.md section 1.6.
#include <gtest/gtest.h>

#include "k3lab/api/error_class.hpp"

namespace k3lab::api {
namespace {

std::string body(const std::string& type, const std::string& message) {
  return R"({"error":{"type":")" + type + R"(","message":")" + message + R"("}})";
}

TEST(Classify, ByStatusAndBody) {
  struct Case {
    int status;
    std::string body;
    ErrorClass expected;
  };
  const Case cases[] = {
      {200, "", ErrorClass::none},
      {400, body("invalid_request_error", "Your request exceeded model token limit : 262144"), ErrorClass::invalid_request},
      {400, body("content_filter", "The request was rejected because it was considered high risk"), ErrorClass::content_filter},
      {422, "", ErrorClass::invalid_request},
      {401, body("invalid_authentication_error", "Invalid Authentication"), ErrorClass::auth},
      {401, "", ErrorClass::auth},
      {403, body("permission_denied_error", "The API you are accessing is not open"), ErrorClass::auth},
      {403, body("access_terminated_error", "risk control"), ErrorClass::auth},
      {403, body("exceeded_current_quota_error", "Your account is suspended due to insufficient balance"), ErrorClass::quota},
      {402, "", ErrorClass::quota},
      {404, body("resource_not_found_error", "model not found"), ErrorClass::not_found},
      {408, "", ErrorClass::transport},
      {429, body("rate_limit_reached_error", "request reached organization TPD rate limit, current: 1507272, limit: 1500000"),
       ErrorClass::rate_limit},
      {429, body("engine_overloaded_error", "The engine is currently overloaded, please try again later"), ErrorClass::overload},
      {429, body("rate_limit_error", "engine overloaded"), ErrorClass::overload},
      {429, body("exceeded_current_quota_error", "insufficient balance"), ErrorClass::quota},
      {429, "not json", ErrorClass::rate_limit},
      {500, body("server_error", "boom"), ErrorClass::server},
      {502, "<html>bad gateway</html>", ErrorClass::server},
      {503, "", ErrorClass::overload},
      {529, "", ErrorClass::overload},
      {418, "", ErrorClass::unknown},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(classify(c.status, c.body), c.expected) << c.status << " " << c.body;
  }
}

TEST(Classify, RetryBudgets) {
  EXPECT_TRUE(is_transport_retryable(ErrorClass::transport));
  EXPECT_TRUE(is_transport_retryable(ErrorClass::server));
  EXPECT_TRUE(is_overload_retryable(ErrorClass::rate_limit));
  EXPECT_TRUE(is_overload_retryable(ErrorClass::overload));
  for (ErrorClass never : {ErrorClass::auth, ErrorClass::quota, ErrorClass::invalid_request, ErrorClass::content_filter,
                           ErrorClass::not_found, ErrorClass::unknown, ErrorClass::none}) {
    EXPECT_FALSE(is_transport_retryable(never)) << to_string(never);
    EXPECT_FALSE(is_overload_retryable(never)) << to_string(never);
  }
}

TEST(Classify, StreamErrors) {
  EXPECT_EQ(classify_stream_error("engine_overloaded_error", ""), ErrorClass::overload);
  EXPECT_EQ(classify_stream_error("content_filter", ""), ErrorClass::content_filter);
  EXPECT_EQ(classify_stream_error("", "something broke"), ErrorClass::server);
  EXPECT_EQ(classify_stream_error("invalid_request_error", "x"), ErrorClass::invalid_request);
}

TEST(Classify, ErrorMessageOfBody) {
  EXPECT_EQ(error_message_of(body("server_error", "boom")), "boom");
  EXPECT_EQ(error_message_of("plain text"), "plain text");
}

}  // namespace
}  // namespace k3lab::api
