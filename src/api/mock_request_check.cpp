#include "k3lab/api/mock_request_check.hpp"

#include <algorithm>

namespace k3lab::api {
namespace {

MockRejection invalid(const std::string& param, const std::string& message) {
  return {400, "invalid_request_error", "", param, message};
}

std::optional<MockRejection> check_messages(const nlohmann::json& messages) {
  if (!messages.is_array() || messages.empty()) return invalid("messages", "'messages' must be a non-empty array");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return invalid(where, where + " must be an object with a string 'role'");
    }
  }
  return std::nullopt;
}

std::optional<MockRejection> check_tools(const nlohmann::json& tools) {
  if (!tools.is_array()) return invalid("tools", "'tools' must be an array of tool objects");
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const auto& t = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    const bool function_tool = t.is_object() && t.value("type", nlohmann::json()) == "function" &&
                               t.contains("function") && t["function"].is_object();
    if (!function_tool) return invalid(where, where + " must be {\"type\": \"function\", \"function\": {...}}");
    const auto& f = t["function"];
    if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty()) {
      return invalid(where + ".function.name", where + ".function.name must be a non-empty string");
    }
    if (f.contains("parameters") && !f["parameters"].is_object()) {
      return invalid(where + ".function.parameters", where + ".function.parameters must be a JSON Schema object");
    }
  }
  return std::nullopt;
}

std::optional<MockRejection> check_scalars(const nlohmann::json& body) {
  if (const auto it = body.find("stream"); it != body.end() && !it->is_boolean()) {
    return invalid("stream", "'stream' must be a boolean, got " + it->dump());
  }
  if (const auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object() || (it->contains("include_usage") && !(*it)["include_usage"].is_boolean())) {
      return invalid("stream_options", "'stream_options' must be an object with a boolean 'include_usage'");
    }
  }
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (const auto it = body.find(key); it != body.end() && !it->is_null()) {
      if (!it->is_number_integer() || it->get<std::int64_t>() <= 0) {
        return invalid(key, std::string("'") + key + "' must be a positive integer, got " + it->dump());
      }
    }
  }
  if (const auto it = body.find("n"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() != 1) {
      return invalid("n", "'n' must be 1 (this server returns one choice), got " + it->dump());
    }
  }
  for (const char* key : {"temperature", "top_p"}) {
    if (const auto it = body.find(key); it != body.end() && !it->is_null() && !it->is_number()) {
      return invalid(key, std::string("'") + key + "' must be a number, got " + it->dump());
    }
  }
  if (const auto it = body.find("tool_choice"); it != body.end() && !it->is_null() && !it->is_string() &&
                                                !it->is_object()) {
    return invalid("tool_choice", "'tool_choice' must be a string or an object");
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json MockRejection::body() const {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? nlohmann::json() : nlohmann::json(param)},
            {"code", code.empty() ? nlohmann::json() : nlohmann::json(code)}}}};
}

MockRejection unknown_model(const std::string& id) {
  return {404, "invalid_request_error", "model_not_found", "model",
          "The model `" + id + "` does not exist or you do not have access to it."};
}

std::optional<MockRejection> check_chat_request(const nlohmann::json& body, const std::vector<std::string>& models) {
  if (body.is_discarded() || !body.is_object()) return invalid("", "the request body is not a JSON object");
  const auto model = body.find("model");
  if (model == body.end() || !model->is_string() || model->get<std::string>().empty()) {
    return invalid("model", "'model' must be a non-empty string");
  }
  if (const auto problem = check_messages(body.value("messages", nlohmann::json()))) return problem;
  if (const auto problem = check_scalars(body)) return problem;
  if (const auto tools = body.find("tools"); tools != body.end() && !tools->is_null()) {
    if (const auto problem = check_tools(*tools)) return problem;
  }
  if (std::find(models.begin(), models.end(), model->get<std::string>()) == models.end()) {
    return unknown_model(model->get<std::string>());
  }
  return std::nullopt;
}

}  // namespace k3lab::api
