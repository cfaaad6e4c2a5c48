#pragma once
// JSON read from outside the process (protocols, manifests, ledger lines, freeze records, and later
// trace files and HTTP bodies) is parsed with limits: a size cap, and a nesting cap checked by a SAX
// pass before any DOM exists. Deeper documents would overflow the stack in the recursive code that
// walks a DOM (dump, merge_patch, schema checks); no k3lab input nests more than a dozen levels.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct JsonLimits {
  std::size_t max_depth = 100;           // nested arrays and objects; a scalar has depth 0
  std::size_t max_bytes = 64u << 20;     // text length
};

inline constexpr JsonLimits kProtocolJsonLimits{100, 16u << 20};
inline constexpr JsonLimits kManifestJsonLimits{100, 64u << 20};
inline constexpr JsonLimits kLedgerLineJsonLimits{100, 256u << 20};
inline constexpr JsonLimits kFreezeRecordJsonLimits{100, 1u << 20};

class JsonInputError : public std::runtime_error {
 public:
  enum class Kind {
    Syntax,          // not JSON
    NumberOverflow,  // a number beyond the range of a double (e.g. 1e400)
    TooDeep,         // nested deeper than JsonLimits::max_depth
    TooLarge,        // longer than JsonLimits::max_bytes
  };
  JsonInputError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Parses `text` within `limits`. `what` names the input in messages ("protocol file x.json"). Throws
// JsonInputError saying what is wrong and where (byte offset); never builds a DOM deeper than allowed.
nlohmann::json parse_json_bounded(std::string_view text, const std::string& what, const JsonLimits& limits = {});

// Reads `file` whole, refusing (JsonInputError, TooLarge) before reading more than limits.max_bytes.
// Throws std::runtime_error naming `what` when the file cannot be read.
std::string read_bounded_text(const std::filesystem::path& file, const std::string& what, const JsonLimits& limits);

}  // namespace k3lab::core
