// A non-streamed chat-completions body and an HTTP error body: parse_chat_completion (documented error:
// std::runtime_error / std::invalid_argument for a malformed completion), and the error classifier and
// message extraction, which must accept any body without throwing.
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_target.hpp"
#include "k3lab/api/chat_types.hpp"
#include "k3lab/api/error_class.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr int kStatuses[] = {200, 400, 401, 404, 429, 500, 503, 529};
  const int status = kStatuses[data[0] % 8];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)k3lab::api::classify(status, body);
  (void)k3lab::api::error_message_of(body);
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    (void)k3lab::api::parse_chat_completion(json);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
