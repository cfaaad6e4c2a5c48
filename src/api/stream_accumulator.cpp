#include "k3lab/api/stream_accumulator.hpp"

#include <stdexcept>

namespace k3lab::api {
namespace {

// A string field of a delta, or nullptr when absent/null. Anything else is a malformed chunk.
const std::string* string_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  if (!it->is_string()) {
    throw std::runtime_error(std::string("stream chunk field '") + key + "' must be a string, got " +
                             it->dump());
  }
  return it->get_ptr<const std::string*>();
}

void set_once(std::string& slot, const std::string& value, const char* what, long long index) {
  if (value.empty() || slot == value) return;
  if (!slot.empty()) {
    throw std::runtime_error("stream sent two different tool-call " + std::string(what) +
                             " values for index " + std::to_string(index) + ": '" + slot +
                             "' then '" + value + "'");
  }
  slot = value;
}

}  // namespace

void StreamAccumulator::add_data(std::string_view data) {
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  nlohmann::json chunk;
  try {
    chunk = nlohmann::json::parse(data);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    const std::size_t shown = data.size() < 160 ? data.size() : 160;
    throw std::runtime_error("malformed JSON in stream chunk " + std::to_string(chunks_ + 1) +
                             " (" + e.what() + "); chunk starts: " + std::string(data.substr(0, shown)));
  }
  try {
    add_chunk(chunk);
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type (found by fuzz/targets/chat_stream_fuzz.cpp): the same documented error as
    // broken JSON, never an nlohmann exception escaping the client.
    throw std::runtime_error("stream chunk " + std::to_string(chunks_ + 1) + " has a field of the wrong type (" +
                             e.what() + ")");
  }
}

void StreamAccumulator::add_error_event(std::string_view data) {
  StreamError e;
  const auto parsed = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* err = &parsed;
  if (parsed.is_object() && parsed.contains("error")) err = &parsed["error"];
  if (err->is_object()) {
    if (const auto* t = string_field(*err, "type")) e.type = *t;
    if (const auto* m = string_field(*err, "message")) e.message = *m;
  } else {
    e.message = std::string(data);
  }
  error_ = std::move(e);
}

void StreamAccumulator::add_chunk(const nlohmann::json& chunk) {
  if (!chunk.is_object()) throw std::runtime_error("stream chunk is not a JSON object: " + chunk.dump());
  ++chunks_;
  if (const auto err = chunk.find("error"); err != chunk.end() && !err->is_null()) {
    StreamError e;
    if (err->is_object()) {
      if (const auto* t = string_field(*err, "type")) e.type = *t;
      if (const auto* m = string_field(*err, "message")) e.message = *m;
    } else {
      e.message = err->dump();
    }
    error_ = std::move(e);
    return;
  }
  if (const auto* id = string_field(chunk, "id"); id && base_.id.empty()) base_.id = *id;
  if (const auto* model = string_field(chunk, "model"); model && !model->empty()) base_.model = *model;
  if (const auto* fp = string_field(chunk, "system_fingerprint"); fp && !fp->empty()) {
    base_.system_fingerprint = *fp;
  }
  if (const auto u = chunk.find("usage"); u != chunk.end() && !u->is_null()) base_.usage = parse_usage(*u);

  const auto choices = chunk.find("choices");
  if (choices == chunk.end() || choices->is_null()) return;
  if (!choices->is_array()) throw std::runtime_error("stream chunk 'choices' must be an array");
  for (const auto& choice : *choices) {
    const long long index = choice.value("index", 0LL);
    if (index != 0) {
      throw std::runtime_error("stream chunk carries choice index " + std::to_string(index) +
                               "; k3lab sends n=1 and reads one choice");
    }
    if (const auto u = choice.find("usage"); u != choice.end() && !u->is_null()) {
      base_.usage = parse_usage(*u);
    }
    if (const auto* fr = string_field(choice, "finish_reason")) base_.finish_reason = *fr;
    const auto delta = choice.find("delta");
    if (delta == choice.end() || delta->is_null()) continue;
    if (!delta->is_object()) throw std::runtime_error("stream chunk 'delta' must be an object");
    if (const auto* c = string_field(*delta, "content"); c && !c->empty()) {
      base_.content += *c;
      has_token_ = true;
    }
    if (const auto* r = string_field(*delta, "reasoning_content")) {
      base_.has_reasoning = true;
      if (!r->empty()) {
        base_.reasoning_content += *r;
        has_token_ = true;
      }
    }
    const auto calls = delta->find("tool_calls");
    if (calls == delta->end() || calls->is_null()) continue;
    if (!calls->is_array()) throw std::runtime_error("delta.tool_calls must be an array");
    long long position = 0;
    for (const auto& fragment : *calls) {
      // Providers always send `index`; fall back to the position in this delta otherwise.
      const long long call_index = fragment.value("index", position);
      ++position;
      ToolCall& call = tool_calls_[call_index];
      if (const auto* id = string_field(fragment, "id")) set_once(call.id, *id, "id", call_index);
      if (const auto* type = string_field(fragment, "type")) {
        if (!type->empty()) call.type = *type;
      }
      if (const auto fn = fragment.find("function"); fn != fragment.end() && fn->is_object()) {
        if (const auto* name = string_field(*fn, "name")) set_once(call.name, *name, "name", call_index);
        if (const auto* args = string_field(*fn, "arguments")) call.arguments += *args;
      }
      has_token_ = true;
    }
  }
}

ChatResponse StreamAccumulator::response() const {
  ChatResponse r = base_;
  r.tool_calls.reserve(tool_calls_.size());
  for (const auto& [index, call] : tool_calls_) r.tool_calls.push_back(call);
  return r;
}

}  // namespace k3lab::api
