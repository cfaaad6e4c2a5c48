#pragma once
// The request checks of k3lab's mock server, as the OpenAI API answers a strict client: a body that
// is not a well-typed chat request gets 400 invalid_request_error naming the field (wrong types,
// non-positive or non-integer limits, n other than 1, malformed tools), and an unknown model gets
// 404 model_not_found. Pure: the server turns a rejection into its HTTP response.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::api {

struct MockRejection {
  int status = 400;
  std::string type;     // error.type
  std::string code;     // error.code (may be empty)
  std::string param;    // error.param: the offending field (may be empty)
  std::string message;  // error.message

  nlohmann::json body() const;  // {"error": {"message", "type", "param", "code"}}
};

// nullopt when `body` is a chat request the mock serves; `models` are the ids it serves.
std::optional<MockRejection> check_chat_request(const nlohmann::json& body, const std::vector<std::string>& models);

// The rejection for GET /v1/models/{id} of an id the mock does not serve.
MockRejection unknown_model(const std::string& id);

}  // namespace k3lab::api
