#include "k3lab/api/mock_server.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "k3lab/api/mock_request_check.hpp"
#include "k3lab/api/prefix_cache.hpp"
#include "k3lab/api/protocol_check.hpp"
#include "k3lab/api/token_estimate.hpp"
#include "k3lab/core/rng.hpp"

namespace k3lab::api {
namespace {

constexpr std::uint64_t kBodyHashSeed = 0x6B336C61622D6D6Bull;  // "k3lab-mk"
constexpr std::uint64_t kSessionSeed = 0x6B336C61622D6964ull;   // "k3lab-id"
constexpr long long kCreated = 1767225600;                      // fixed: responses are deterministic

// The longest prefix of `text` of at most `max_bytes` that ends on a UTF-8 character boundary.
std::string utf8_prefix(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

// Splits text into pieces of about `piece` bytes without cutting a UTF-8 character.
std::vector<std::string> utf8_pieces(const std::string& text, std::size_t piece) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = std::min(text.size(), pos + piece);
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

nlohmann::json error_json(const std::string& type, const std::string& message) {
  return {{"error", {{"type", type}, {"message", message}}}};
}

std::uint64_t requested_max_completion(const nlohmann::json& body, std::uint64_t fallback) {
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (const auto it = body.find(key); it != body.end() && it->is_number_integer() && it->get<std::int64_t>() > 0) {
      return it->get<std::uint64_t>();
    }
  }
  return fallback;
}

// What the model's reply becomes on the wire, after the completion limit.
struct Completion {
  std::string content;
  std::string reasoning;
  bool send_reasoning = false;
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  nlohmann::json usage;
};

}  // namespace

struct MockServer::Impl {
  explicit Impl(MockServerOptions o) : options(std::move(o)), cache(options.cache_block_bytes) {}

  MockServerOptions options;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> listen_finished{false};
  std::atomic<bool> serving_blocking{false};
  std::atomic<int> bound_port{0};
  PrefixCache cache;

  mutable std::mutex mutex;
  std::map<std::uint64_t, int> arrivals;                    // chat body hash -> times seen (fault attempts)
  std::map<std::uint64_t, std::uint64_t> request_arrivals;  // request key -> times seen (request ids)
  std::uint64_t session_seed = hash64("", kSessionSeed);    // salts request ids (begin_session)
  std::vector<MockRequestRecord> log;
  std::size_t next_sequence = 0;
  std::size_t in_progress = 0;
  std::size_t peak = 0;

  void enter() {
    std::lock_guard lock(mutex);
    ++in_progress;
    peak = std::max(peak, in_progress);
  }
  void leave() {
    std::lock_guard lock(mutex);
    --in_progress;
  }

  FaultKind decide_fault(std::uint64_t body_hash, int attempt) const {
    const FaultPlan& plan = options.faults;
    if (!plan.script.empty()) {
      return attempt < static_cast<int>(plan.script.size()) ? plan.script[static_cast<std::size_t>(attempt)]
                                                            : FaultKind::none;
    }
    if (attempt >= plan.max_faulted_attempts) return FaultKind::none;
    core::Rng rng(core::stream_seed(plan.seed, {body_hash, static_cast<std::uint64_t>(attempt)}));
    double u = rng.uniform();
    const std::pair<double, FaultKind> table[] = {
        {plan.rate_limit, FaultKind::rate_limit},     {plan.overload, FaultKind::overload},
        {plan.server_error, FaultKind::server_error}, {plan.unavailable, FaultKind::unavailable},
        {plan.drop_mid_stream, FaultKind::drop_mid_stream}, {plan.slow_first_token, FaultKind::slow_first_token},
    };
    for (const auto& [p, kind] : table) {
      if (u < p) return kind;
      u -= p;
    }
    return FaultKind::none;
  }

  void finish_record(MockRequestRecord record) {
    std::lock_guard lock(mutex);
    log.push_back(std::move(record));
  }

  static void send_error(httplib::Response& res, int status, const std::string& type, const std::string& message) {
    res.status = status;
    res.set_content(error_json(type, message).dump(), "application/json");
  }

  // Names a request by what it is, never by when it came: a hash of the session, its method, path and
  // body, and how many identical requests the session saw before it.
  std::string identify(const httplib::Request& req) {
    const std::uint64_t key = hash64(req.method + " " + req.path + "\n" + req.body, kBodyHashSeed);
    std::uint64_t id = 0;
    {
      std::lock_guard lock(mutex);
      id = hash64(std::to_string(key) + "#" + std::to_string(request_arrivals[key]++), session_seed);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
    return hex;
  }

  void set_common_headers(httplib::Response& res, const std::string& request_id) const {
    const std::string id = "mock-req-" + request_id;
    res.set_header("x-request-id", id);
    res.set_header("msh-request-id", id);
    res.set_header("x-k3lab-mock", "1");
  }

  bool authorized(const httplib::Request& req, httplib::Response& res) const {
    if (!options.required_api_key) return true;
    const std::string presented = req.get_header_value("Authorization");
    if (presented == "Bearer " + *options.required_api_key) return true;
    // Deliberately echoes what was presented (see header): the client must redact it.
    send_error(res, 401, "invalid_authentication_error",
               "Invalid Authentication: incorrect API key provided: '" + presented + "'");
    return false;
  }

  Completion complete(const nlohmann::json& body, const MockReply& reply, std::uint64_t prompt_tokens,
                      std::uint64_t cached_tokens, bool thinking) const {
    Completion c;
    const std::uint64_t max_tokens = requested_max_completion(body, options.default_max_completion_tokens);
    const std::uint64_t budget_bytes = max_tokens * kApproxBytesPerToken;
    c.send_reasoning = thinking && !reply.reasoning_content.empty();
    c.reasoning = c.send_reasoning ? reply.reasoning_content : std::string();
    c.content = reply.content;
    c.tool_calls = reply.tool_calls;
    for (std::size_t i = 0; i < c.tool_calls.size(); ++i) {
      if (c.tool_calls[i].id.empty()) c.tool_calls[i].id = "functions." + c.tool_calls[i].name + ":" + std::to_string(i);
    }
    c.finish_reason = !reply.finish_reason.empty() ? reply.finish_reason
                      : c.tool_calls.empty()       ? "stop"
                                                   : "tool_calls";
    std::size_t call_bytes = 0;
    for (const auto& call : c.tool_calls) call_bytes += call.name.size() + call.arguments.size();
    if (c.reasoning.size() > budget_bytes) {
      c.reasoning = utf8_prefix(c.reasoning, budget_bytes);
      c.content.clear();
      c.tool_calls.clear();
      c.finish_reason = "length";
    } else if (c.content.size() + call_bytes > budget_bytes - c.reasoning.size()) {
      c.content = utf8_prefix(c.content, budget_bytes - c.reasoning.size());
      c.tool_calls.clear();
      c.finish_reason = "length";
    }
    std::uint64_t completion = approx_token_count(c.reasoning) + approx_token_count(c.content);
    for (const auto& call : c.tool_calls) completion += approx_token_count(call.name.size() + call.arguments.size());
    completion = std::min(completion, max_tokens);
    c.usage = {{"prompt_tokens", prompt_tokens},
               {"completion_tokens", completion},
               {"total_tokens", prompt_tokens + completion},
               {"cached_tokens", cached_tokens},
               {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
    if (options.report_reasoning_tokens) {
      c.usage["completion_tokens_details"] = {
          {"reasoning_tokens", std::min<std::uint64_t>(approx_token_count(c.reasoning), completion)}};
    }
    return c;
  }

  static nlohmann::json tool_calls_json(const std::vector<ToolCall>& calls) {
    auto out = nlohmann::json::array();
    for (const auto& call : calls) {
      out.push_back({{"id", call.id}, {"type", call.type}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    return out;
  }

  nlohmann::json completion_body(const nlohmann::json& body, const Completion& c, const std::string& request_id) const {
    nlohmann::json message = {{"role", "assistant"}, {"content", c.content}};
    if (c.send_reasoning) message["reasoning_content"] = c.reasoning;
    if (!c.tool_calls.empty()) message["tool_calls"] = tool_calls_json(c.tool_calls);
    return {{"id", "chatcmpl-mock-" + request_id},
            {"object", "chat.completion"},
            {"created", kCreated},
            {"model", body["model"]},
            {"system_fingerprint", "k3lab-mock"},
            {"choices", {{{"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", c.finish_reason}}}},
            {"usage", c.usage}};
  }

  // The SSE text of a streamed completion, and where its first content-bearing event starts.
  std::pair<std::string, std::size_t> stream_text(const nlohmann::json& body, const Completion& c,
                                                  const std::string& request_id) const {
    const std::string eol = options.crlf ? "\r\n" : "\n";
    const nlohmann::json head = {{"id", "chatcmpl-mock-" + request_id},
                                 {"object", "chat.completion.chunk"},
                                 {"created", kCreated},
                                 {"model", body["model"]},
                                 {"system_fingerprint", "k3lab-mock"}};
    std::string text;
    auto emit = [&](const nlohmann::json& choice_fields, const nlohmann::json* top_usage, bool empty_choices) {
      nlohmann::json chunk = head;
      if (empty_choices) {
        chunk["choices"] = nlohmann::json::array();
      } else {
        nlohmann::json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
        choice.update(choice_fields);
        chunk["choices"] = nlohmann::json::array({choice});
      }
      if (top_usage) chunk["usage"] = *top_usage;
      text += "data: " + chunk.dump() + eol + eol;
    };
    if (options.keep_alive_comment) text += ": keep-alive" + eol + eol;
    emit({{"delta", {{"role", "assistant"}, {"content", ""}}}}, nullptr, false);
    const std::size_t first_token_offset = text.size();
    const std::size_t piece = std::max<std::size_t>(1, options.stream_piece_bytes);
    for (const auto& p : utf8_pieces(c.reasoning, piece)) emit({{"delta", {{"reasoning_content", p}}}}, nullptr, false);
    for (const auto& p : utf8_pieces(c.content, piece)) emit({{"delta", {{"content", p}}}}, nullptr, false);
    for (std::size_t i = 0; i < c.tool_calls.size(); ++i) {
      const auto& call = c.tool_calls[i];
      emit({{"delta",
             {{"tool_calls",
               {{{"index", i}, {"id", call.id}, {"type", call.type}, {"function", {{"name", call.name}, {"arguments", ""}}}}}}}}},
           nullptr, false);
      for (const auto& p : utf8_pieces(call.arguments, piece)) {
        emit({{"delta", {{"tool_calls", {{{"index", i}, {"function", {{"arguments", p}}}}}}}}}, nullptr, false);
      }
    }
    // As the OpenAI API: usage only when the request asked for it (stream_options.include_usage).
    const auto stream_options = body.value("stream_options", nlohmann::json::object());
    const bool include_usage = stream_options.is_object() && stream_options.value("include_usage", false);
    nlohmann::json finish = {{"delta", nlohmann::json::object()}, {"finish_reason", c.finish_reason}};
    if (include_usage && options.usage_placement != UsagePlacement::top_level) finish["usage"] = c.usage;
    emit(finish, nullptr, false);
    if (include_usage && options.usage_placement != UsagePlacement::choice) emit(nlohmann::json::object(), &c.usage, true);
    text += "data: [DONE]" + eol + eol;
    return {text, first_token_offset};
  }

  // Every request: its arrival number, its id, the common response headers, and the start of its record.
  MockRequestRecord open_request(const httplib::Request& req, httplib::Response& res) {
    MockRequestRecord record;
    {
      std::lock_guard lock(mutex);
      record.sequence = next_sequence++;
    }
    record.request_id = identify(req);
    set_common_headers(res, record.request_id);
    record.path = req.path;
    record.had_authorization = req.has_header("Authorization");
    return record;
  }

  void handle_models(const httplib::Request& req, httplib::Response& res) {
    MockRequestRecord record = open_request(req, res);
    if (authorized(req, res)) {
      auto data = nlohmann::json::array();
      for (const auto& id : options.models) {
        data.push_back({{"id", id}, {"object", "model"}, {"created", kCreated}, {"owned_by", "k3lab-mock"}});
      }
      res.set_content(nlohmann::json({{"object", "list"}, {"data", data}}).dump(), "application/json");
      res.status = 200;
    }
    record.status = res.status;
    finish_record(std::move(record));
  }

  // GET /v1/models/{id}: the model object, or 404 model_not_found.
  void handle_model(const httplib::Request& req, httplib::Response& res) {
    MockRequestRecord record = open_request(req, res);
    if (authorized(req, res)) {
      const std::string id = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
      if (std::find(options.models.begin(), options.models.end(), id) != options.models.end()) {
        res.set_content(nlohmann::json({{"id", id}, {"object", "model"}, {"created", kCreated}, {"owned_by", "k3lab-mock"}}).dump(),
                        "application/json");
        res.status = 200;
      } else {
        const auto rejection = unknown_model(id);
        res.status = rejection.status;
        res.set_content(rejection.body().dump(), "application/json");
      }
    }
    record.status = res.status;
    finish_record(std::move(record));
  }

  void handle_chat(const httplib::Request& req, httplib::Response& res) {
    enter();
    bool streaming_started = false;
    try {
      streaming_started = handle_chat_inner(req, res);
    } catch (const std::exception& e) {
      send_error(res, 500, "server_error", std::string("mock server failure: ") + e.what());
    }
    if (!streaming_started) leave();
  }

  // Returns true when a streaming provider now owns the in-progress count.
  bool handle_chat_inner(const httplib::Request& req, httplib::Response& res) {
    MockRequestRecord record = open_request(req, res);
    auto done = [&](int status) {
      record.status = status;
      finish_record(record);
      return false;
    };
    if (!authorized(req, res)) return done(401);

    record.body_hash = hash64(req.body, kBodyHashSeed);
    {
      std::lock_guard lock(mutex);
      record.attempt = arrivals[record.body_hash]++;
    }
    const auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (options.log_bodies) record.body = body.is_discarded() ? nlohmann::json() : body;
    if (const auto rejection = check_chat_request(body, options.models)) {
      res.status = rejection->status;
      res.set_content(rejection->body().dump(), "application/json");
      return done(rejection->status);
    }
    record.stream = body.value("stream", false);

    record.fault = decide_fault(record.body_hash, record.attempt);
    if (const auto status = send_fault(record.fault, res)) return done(*status);

    const bool thinking = thinking_enabled(body, options.thinking_default);
    const std::string prompt = render_prompt(body);
    const std::uint64_t prompt_tokens = approx_token_count(prompt);
    if (const auto status = reject_unservable(body, prompt_tokens, thinking, res)) return done(*status);
    MockReply reply;
    try {
      reply = options.model(body);
    } catch (const std::exception& e) {
      send_error(res, 500, "server_error", std::string("mock model failed: ") + e.what());
      return done(500);
    }
    if (reply.error) {
      send_error(res, reply.error->status, reply.error->type, reply.error->message);
      return done(reply.error->status);
    }
    const std::uint64_t cached_tokens = cache.lookup_and_insert(prompt) / kApproxBytesPerToken;
    const Completion completion = complete(body, reply, prompt_tokens, cached_tokens, thinking);

    std::string text;
    std::size_t first_token_offset = 0;
    if (record.stream) {
      std::tie(text, first_token_offset) = stream_text(body, completion, record.request_id);
    } else {
      text = completion_body(body, completion, record.request_id).dump();
    }
    record.status = 200;
    finish_record(record);
    res.status = 200;
    if (!record.stream) {
      send_whole(res, std::move(text), record.fault);
      return false;
    }
    send_stream(res, std::move(text), first_token_offset, record.fault);
    return true;
  }

  // The error response of a fault that replaces the reply; returns the status sent.
  std::optional<int> send_fault(FaultKind fault, httplib::Response& res) const {
    const FaultPlan& plan = options.faults;
    auto retry_after = [&] {
      if (plan.retry_after_seconds >= 0) res.set_header("Retry-After", std::to_string(plan.retry_after_seconds));
    };
    switch (fault) {
      case FaultKind::rate_limit:
        retry_after();
        send_error(res, 429, "rate_limit_reached_error",
                   "Your account request reached organization max RPM rate limit (mock fault)");
        return 429;
      case FaultKind::overload:
        retry_after();
        send_error(res, 429, "engine_overloaded_error",
                   "The engine is currently overloaded, please try again later (mock fault)");
        return 429;
      case FaultKind::server_error:
        send_error(res, 500, "server_error", "Internal server error (mock fault)");
        return 500;
      case FaultKind::unavailable:
        retry_after();
        send_error(res, 503, "engine_overloaded_error", "Service temporarily unavailable (mock fault)");
        return 503;
      default: return std::nullopt;
    }
  }

  // 400 for a request over the context window or breaking the replay contract; returns the status sent.
  std::optional<int> reject_unservable(const nlohmann::json& body, std::uint64_t prompt_tokens, bool thinking,
                                       httplib::Response& res) const {
    const std::uint64_t max_tokens = requested_max_completion(body, options.default_max_completion_tokens);
    if (prompt_tokens + max_tokens > options.context_window_tokens) {
      send_error(res, 400, "invalid_request_error",
                 "Invalid request: Your request exceeded model token limit : " +
                     std::to_string(options.context_window_tokens));
      return 400;
    }
    if (const auto violation = check_replay_protocol(body["messages"], thinking, options.strict_tool_messages)) {
      send_error(res, 400, "invalid_request_error", violation->message);
      return 400;
    }
    return std::nullopt;
  }

  // A non-streamed reply, delayed or cut short by its fault.
  void send_whole(httplib::Response& res, std::string text, FaultKind fault) const {
    const std::string content_type = "application/json";
    if (fault == FaultKind::slow_first_token) std::this_thread::sleep_for(options.faults.first_token_delay);
    if (fault == FaultKind::stall_keepalive) std::this_thread::sleep_for(options.faults.stall_limit);
    if (fault != FaultKind::drop_mid_stream) {
      res.set_content(text, content_type);
      return;
    }
    // Declares the full length, sends half, and closes: the client sees a short body.
    auto shared_text = std::make_shared<std::string>(std::move(text));
    res.set_content_provider(shared_text->size(), content_type,
                             [shared_text](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               const std::size_t half = shared_text->size() / 2;
                               if (offset < half) sink.write(shared_text->data() + offset, half - offset);
                               return false;
                             });
  }

  // A streamed reply in wire-sized writes; the provider takes over the in-progress count.
  void send_stream(httplib::Response& res, std::string text, std::size_t first_token_offset, FaultKind fault) {
    const std::string content_type = "text/event-stream";
    const bool slow = fault == FaultKind::slow_first_token;
    const bool drop = fault == FaultKind::drop_mid_stream;
    const auto delay = options.faults.first_token_delay;
    res.set_header("Cache-Control", "no-cache");
    const std::size_t wire = options.wire_write_bytes;
    auto shared_text = std::make_shared<std::string>(std::move(text));
    // The request stops counting as in progress before its last bytes go out, so a client that has
    // read the whole response can never observe it as still running (max_concurrent_requests);
    // the releaser covers a stream the client abandoned.
    auto left = std::make_shared<std::atomic<bool>>(false);
    auto leave_once = [this, left] {
      if (!left->exchange(true)) leave();
    };
    if (fault == FaultKind::stall_keepalive) {
      send_keepalive_stall(res, content_type, leave_once);
      return;
    }
    res.set_chunked_content_provider(
        content_type,
        [shared_text, first_token_offset, slow, drop, delay, wire, leave_once](std::size_t, httplib::DataSink& sink) {
          const std::string& t = *shared_text;
          const std::size_t limit = drop ? t.size() / 2 : t.size();
          std::size_t pos = 0;
          bool slept = false;
          while (pos < limit) {
            std::size_t end = wire > 0 ? std::min(limit, pos + wire) : limit;
            if (slow && !slept) {
              if (pos >= first_token_offset) {
                std::this_thread::sleep_for(delay);
                slept = true;
              } else {
                end = std::min(end, first_token_offset);
              }
            }
            if (end == limit) leave_once();
            if (!sink.write(t.data() + pos, end - pos)) return false;
            pos = end;
          }
          leave_once();
          if (drop) return false;  // closes the connection without the terminating chunk
          sink.done();
          return true;
        },
        [leave_once](bool) { leave_once(); });
  }

  // Comments only, never a payload byte, until the client leaves or stall_limit passes.
  template <typename Leave>
  void send_keepalive_stall(httplib::Response& res, const std::string& content_type, Leave leave_once) const {
    const auto interval = options.faults.keepalive_interval;
    const auto limit = options.faults.stall_limit;
    res.set_chunked_content_provider(
        content_type,
        [interval, limit, leave_once](std::size_t, httplib::DataSink& sink) {
          static const std::string comment = ": keep-alive\n\n";
          const auto end = std::chrono::steady_clock::now() + limit;
          while (std::chrono::steady_clock::now() < end) {
            if (!sink.write(comment.data(), comment.size())) break;
            std::this_thread::sleep_for(interval);
          }
          leave_once();
          return false;
        },
        [leave_once](bool) { leave_once(); });
  }

  // Binds `port` (0: an ephemeral one) on the configured host.
  void bind(int port) {
    if (thread.joinable()) throw std::runtime_error("mock server already started on port " + std::to_string(bound_port.load()));
    if (port == 0) {
      bound_port = server.bind_to_any_port(options.host);
      if (bound_port <= 0) throw std::runtime_error("mock server could not bind an ephemeral port on " + options.host);
    } else {
      if (!server.bind_to_port(options.host, port)) {
        throw std::runtime_error("mock server could not bind " + options.host + ":" + std::to_string(port) +
                                 "; is the port in use? pick another with --port");
      }
      bound_port = port;
    }
  }
};

MockServer::MockServer(MockServerOptions options) {
  const FaultPlan& p = options.faults;
  const double probs[] = {p.rate_limit, p.overload, p.server_error, p.unavailable, p.drop_mid_stream, p.slow_first_token};
  double sum = 0;
  for (double x : probs) {
    if (!(x >= 0 && x <= 1)) throw std::invalid_argument("FaultPlan probabilities must lie in [0, 1]");
    sum += x;
  }
  if (sum > 1.0 + 1e-12) throw std::invalid_argument("FaultPlan probabilities sum to more than 1");
  if (options.cache_block_bytes == 0 || options.cache_block_bytes % kApproxBytesPerToken != 0) {
    throw std::invalid_argument("MockServerOptions.cache_block_bytes must be a positive multiple of 4 (one token = 4 bytes)");
  }
  if (!options.model) throw std::invalid_argument("MockServerOptions.model is empty; use echo_model() or your own");
  if (options.models.empty()) throw std::invalid_argument("MockServerOptions.models must list at least one id");
  impl_ = std::make_unique<Impl>(std::move(options));
  auto& svr = impl_->server;
  svr.new_task_queue = [] { return new httplib::ThreadPool(32); };
  svr.set_tcp_nodelay(true);
  svr.set_read_timeout(std::chrono::seconds(60));
  svr.set_write_timeout(std::chrono::seconds(60));
  Impl* impl = impl_.get();
  svr.Post("/v1/chat/completions",
           [impl](const httplib::Request& req, httplib::Response& res) { impl->handle_chat(req, res); });
  svr.Get("/v1/models", [impl](const httplib::Request& req, httplib::Response& res) { impl->handle_models(req, res); });
  svr.Get(R"(/v1/models/([^/]+))",
          [impl](const httplib::Request& req, httplib::Response& res) { impl->handle_model(req, res); });
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(error_json("resource_not_found_error", "no route for " + req.method + " " + req.path).dump(),
                      "application/json");
    }
  });
}

MockServer::~MockServer() { stop(); }

int MockServer::start(int port) {
  impl_->bind(port);
  impl_->listen_finished = false;
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->listen_finished = true;
  });
  return impl_->bound_port;
}

void MockServer::stop() {
  if (!impl_) return;
  if (impl_->serving_blocking) {
    while (!impl_->server.is_running() && impl_->serving_blocking) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    impl_->server.stop();
    return;
  }
  if (!impl_->thread.joinable()) return;
  // stop() only takes effect once the accept loop runs; wait for it (bounded by the thread ending).
  while (!impl_->server.is_running() && !impl_->listen_finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->server.stop();
  impl_->thread.join();
}

void MockServer::serve(int port) {
  impl_->bind(port);
  auto& svr = impl_->server;
  spdlog::info("k3lab mock server listening on {} (simulated endpoint: not evidence about Kimi K3)", base_url());
  impl_->serving_blocking = true;
  svr.listen_after_bind();
  impl_->serving_blocking = false;
}

int MockServer::port() const { return impl_->bound_port; }

std::string MockServer::base_url() const {
  const std::string& host = impl_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(impl_->bound_port) + "/v1";
}

std::vector<MockRequestRecord> MockServer::received() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->log;
}

std::size_t MockServer::max_concurrent_requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->peak;
}

void MockServer::clear_cache() { impl_->cache.clear(); }

void MockServer::begin_session(std::string_view session) {
  std::lock_guard lock(impl_->mutex);
  impl_->arrivals.clear();
  impl_->request_arrivals.clear();
  impl_->session_seed = hash64(session, kSessionSeed);
  impl_->cache.clear();
}

}  // namespace k3lab::api
