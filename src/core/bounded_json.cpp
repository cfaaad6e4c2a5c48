#include "k3lab/core/bounded_json.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace k3lab::core {
namespace {

using json = nlohmann::json;

// nlohmann's messages start with "[json.exception.parse_error.101] "; the tag helps nobody here.
std::string without_tag(const std::string& message) {
  const auto close = message.find("] ");
  const bool tagged = message.rfind("[json.exception.", 0) == 0 && close != std::string::npos;
  return tagged ? message.substr(close + 2) : message;
}

// The first pass: walks the text without building anything, stopping at the first level too deep
// or the first syntax error.
class NestingCheck final : public nlohmann::json_sax<json> {
 public:
  explicit NestingCheck(std::size_t max_depth) : max_depth_(max_depth) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t position, const std::string&, const json::exception& error) override {
    // 406 is nlohmann's "number overflow" (a literal beyond the range of a double).
    failure_ = error.id == 406 ? JsonInputError::Kind::NumberOverflow : JsonInputError::Kind::Syntax;
    detail_ = without_tag(error.what());
    position_ = position;
    return false;
  }

  bool too_deep() const { return too_deep_; }
  JsonInputError::Kind failure() const { return failure_; }
  const std::string& detail() const { return detail_; }
  std::size_t position() const { return position_; }

 private:
  bool enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }
  bool leave() {
    --depth_;
    return true;
  }

  std::size_t max_depth_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  JsonInputError::Kind failure_ = JsonInputError::Kind::Syntax;
  std::string detail_;
  std::size_t position_ = 0;
};

JsonInputError too_large(const std::string& what, std::size_t bytes, const JsonLimits& limits) {
  return JsonInputError(JsonInputError::Kind::TooLarge,
                        what + " is " + std::to_string(bytes) + " bytes, over the limit of " +
                            std::to_string(limits.max_bytes) + " for this kind of input; check that it is the right "
                            "file (k3lab never writes one this large)");
}

}  // namespace

json parse_json_bounded(std::string_view text, const std::string& what, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) throw too_large(what, text.size(), limits);
  NestingCheck check(limits.max_depth);
  if (!json::sax_parse(text, &check)) {
    if (check.too_deep()) {
      throw JsonInputError(JsonInputError::Kind::TooDeep,
                           what + " nests arrays and objects deeper than " + std::to_string(limits.max_depth) +
                               " levels; no k3lab input needs more than a few, so it is damaged or not the file "
                               "meant");
    }
    if (check.failure() == JsonInputError::Kind::NumberOverflow) {
      throw JsonInputError(JsonInputError::Kind::NumberOverflow,
                           what + " has a number beyond the range of a double (about 1.8e308) at byte " +
                               std::to_string(check.position()) + ": " + check.detail() +
                               "; write a value within that range");
    }
    throw JsonInputError(JsonInputError::Kind::Syntax, what + " is not valid JSON: " + check.detail());
  }
  return json::parse(text);
}

std::string read_bounded_text(const std::filesystem::path& file, const std::string& what, const JsonLimits& limits) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + what + " " + file.string() + ": " + std::strerror(errno) +
                             "; check the path and permissions");
  }
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  if (!error && size > limits.max_bytes) throw too_large(what + " " + file.string(), size, limits);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.size() > limits.max_bytes) throw too_large(what + " " + file.string(), text.size(), limits);
  return text;
}

}  // namespace k3lab::core
