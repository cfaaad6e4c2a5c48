// Protocol documents: bounded JSON parsing, then rebuilding and validating a Protocol from the
// document. Documented errors: std::invalid_argument / std::runtime_error (ProtocolError included).
#include <stdexcept>
#include <string_view>

#include "fuzz_target.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto document = k3lab::core::parse_json_bounded(text, "fuzz protocol", k3lab::core::kProtocolJsonLimits);
    (void)k3lab::core::protocol_from_document(document, "fuzz.json");
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  return 0;
}
