#include "k3lab/api/chat_client.hpp"

#include <curl/curl.h>
#include <spdlog/spdlog.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "ascii_lower.hpp"
#include "k3lab/api/chat_stream_decoder.hpp"
#include "k3lab/api/error_class.hpp"
#include "k3lab/api/redact.hpp"
#include "k3lab/api/reasoning_echo.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/api/token_bucket.hpp"
#include "k3lab/api/token_estimate.hpp"

namespace k3lab::api {
namespace {

using Nanos = std::chrono::nanoseconds;
constexpr std::size_t kErrorBodyCap = 1 << 20;  // error bodies are short; never buffer a flood

void global_curl_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("libcurl global initialisation failed");
    }
  });
}

// The key for the duration of one call; zeroed on destruction so it does not linger in freed memory.
class ScopedSecret {
 public:
  explicit ScopedSecret(const std::string& env_name) {
    if (const char* value = std::getenv(env_name.c_str())) value_ = value;
  }
  ~ScopedSecret() { wipe(value_); }
  ScopedSecret(const ScopedSecret&) = delete;
  ScopedSecret& operator=(const ScopedSecret&) = delete;
  const std::string& value() const { return value_; }
  static void wipe(std::string& s) {
    if (!s.empty()) explicit_bzero(s.data(), s.size());
    s.clear();
  }

 private:
  std::string value_;
};

// A key with whitespace or control characters would corrupt (or inject into) the header block; the
// message names the variable, never the value.
void check_key_characters(const std::string& key, const std::string& env_name) {
  for (const unsigned char c : key) {
    if (c <= 0x20 || c == 0x7F) {
      throw std::runtime_error(env_name +
                               " contains whitespace or control characters (a stray newline from a file?); "
                               "export the bare key");
    }
  }
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

double to_ms(Nanos d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Transfer {
  CURL* handle = nullptr;
  bool want_stream = false;
  Clock* clock = nullptr;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> first_token;
  std::map<std::string, std::string> headers;  // lower-case names
  long status = -1;
  bool decided = false;      // whether the body goes to the SSE decoder
  bool use_decoder = false;
  std::string body;
  std::size_t body_cap = 0;
  std::unique_ptr<ChatStreamDecoder> decoder;
  std::string decode_error;
  // Stall and stop detection (xferinfo callback). Real time: a stall is a property of the network.
  const std::atomic<bool>* stop = nullptr;
  std::chrono::steady_clock::duration stall_timeout = std::chrono::hours(24);
  std::chrono::steady_clock::time_point last_payload = std::chrono::steady_clock::now();
  bool in_comment_line = false;  // inside an SSE comment line (": keep-alive")
  bool at_line_start = true;
  bool stopped = false;
  bool stalled = false;
};

// Whether `data` carries payload: for an event stream, any byte outside SSE comment lines other than
// line ends; for any other body, any byte.
bool carries_payload(Transfer& t, std::string_view data) {
  if (!t.use_decoder) return !data.empty();
  bool payload = false;
  for (const char c : data) {
    if (c == '\n' || c == '\r') {
      t.at_line_start = true;
      t.in_comment_line = false;
      continue;
    }
    if (t.at_line_start && c == ':') t.in_comment_line = true;
    t.at_line_start = false;
    payload = payload || !t.in_comment_line;
  }
  return payload;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->stop && t->stop->load()) {
    t->stopped = true;
    return 1;  // aborts the transfer (CURLE_ABORTED_BY_CALLBACK)
  }
  if (std::chrono::steady_clock::now() - t->last_payload > t->stall_timeout) {
    t->stalled = true;
    return 1;
  }
  return 0;
}

size_t on_header(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  const std::string_view line = trim(std::string_view(buffer, n));
  if (line.rfind("HTTP/", 0) == 0) {
    t->headers.clear();  // a new response (after 1xx): earlier headers belong to another one
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string name = ascii_lower(trim(line.substr(0, colon)));
  const std::string value(trim(line.substr(colon + 1)));
  t->last_payload = std::chrono::steady_clock::now();
  auto [it, inserted] = t->headers.emplace(name, value);
  if (!inserted) it->second += ", " + value;
  return n;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (!t->decided) {
    t->decided = true;
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &t->status);
    const auto ct = t->headers.find("content-type");
    const bool event_stream = ct != t->headers.end() && ct->second.find("text/event-stream") != std::string::npos;
    t->use_decoder = t->want_stream && t->status >= 200 && t->status < 300 && event_stream;
    t->body_cap = (t->status >= 200 && t->status < 300) ? std::string::npos : kErrorBodyCap;
    if (t->use_decoder) {
      t->decoder = std::make_unique<ChatStreamDecoder>([t] { t->first_token = t->clock->now(); });
    }
  }
  if (carries_payload(*t, std::string_view(data, n))) t->last_payload = std::chrono::steady_clock::now();
  if (t->use_decoder) {
    try {
      t->decoder->push(std::string_view(data, n));
    } catch (const std::exception& e) {
      t->decode_error = e.what();
      return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
    }
    return n;
  }
  if (t->body.size() < t->body_cap) t->body.append(data, std::min(n, t->body_cap - t->body.size()));
  return n;
}

// Retry-After as a duration: `retry-after-ms` (OpenAI style), else `retry-after` in seconds
// (integer or decimal) or as an HTTP date.
std::optional<Nanos> parse_retry_after(const std::map<std::string, std::string>& headers,
                                       std::chrono::system_clock::time_point now) {
  if (const auto it = headers.find("retry-after-ms"); it != headers.end()) {
    char* end = nullptr;
    const double ms = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && std::isfinite(ms) && ms >= 0) {
      return Nanos(static_cast<long long>(ms * 1e6));
    }
  }
  const auto it = headers.find("retry-after");
  if (it == headers.end()) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(it->second.c_str(), &end);
  if (end != it->second.c_str() && *end == '\0' && std::isfinite(seconds) && seconds >= 0) {
    return Nanos(static_cast<long long>(seconds * 1e9));
  }
  const time_t date = curl_getdate(it->second.c_str(), nullptr);
  if (date < 0) return std::nullopt;
  const auto target = std::chrono::system_clock::from_time_t(date);
  return target > now ? std::chrono::duration_cast<Nanos>(target - now) : Nanos(0);
}

struct AttemptOutcome {
  ErrorClass error_class = ErrorClass::none;
  std::string message;
  long status = 0;
  std::map<std::string, std::string> headers;
  std::optional<Nanos> retry_after;
  ChatResponse response;
  std::optional<double> ttft_ms;
  double latency_ms = 0;
};

// Options every request sets: http(s) only, no redirects, verified TLS, no signals, our headers.
void set_request_basics(CURL* h, curl_slist* headers, Transfer& t) {
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
}

std::int64_t completion_allowance(const nlohmann::json& request) {
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (const auto it = request.find(key); it != request.end() && it->is_number_integer()) {
      return it->get<std::int64_t>();
    }
  }
  return 0;
}

}  // namespace

struct ChatClient::Shared {
  std::mutex mutex;
  std::condition_variable slot_free;
  std::size_t in_flight = 0;
  std::size_t max_in_flight = 1;
  std::unique_ptr<TokenBucket> request_bucket;
  std::unique_ptr<TokenBucket> token_bucket;

  void acquire_slot() {
    std::unique_lock lock(mutex);
    slot_free.wait(lock, [this] { return in_flight < max_in_flight; });
    ++in_flight;
  }
  void release_slot() {
    {
      std::lock_guard lock(mutex);
      --in_flight;
    }
    slot_free.notify_one();
  }
};

void validate_chat_request(const nlohmann::json& request, const std::vector<std::string>& allowed_efforts) {
  if (!request.is_object()) throw std::invalid_argument("chat request must be a JSON object");
  const auto model = request.find("model");
  if (model == request.end() || !model->is_string() || model->get_ref<const std::string&>().empty()) {
    throw std::invalid_argument("chat request needs a non-empty string 'model' (e.g. \"kimi-k3\")");
  }
  const auto messages = request.find("messages");
  if (messages == request.end() || !messages->is_array() || messages->empty()) {
    throw std::invalid_argument("chat request needs a non-empty 'messages' array");
  }
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      throw std::invalid_argument("messages[" + std::to_string(i) + "] must be an object with a string 'role'");
    }
  }
  if (const auto s = request.find("stream"); s != request.end() && !s->is_boolean()) {
    throw std::invalid_argument("chat request 'stream' must be true or false");
  }
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (const auto it = request.find(key); it != request.end()) {
      if (!it->is_number_integer() || it->get<std::int64_t>() <= 0) {
        throw std::invalid_argument(std::string("chat request '") + key + "' must be a positive integer");
      }
    }
  }
  if (const auto n = request.find("n"); n != request.end() && !(n->is_number_integer() && n->get<int>() == 1)) {
    throw std::invalid_argument("chat request 'n' must be 1: k3lab reads one choice per call");
  }
  if (const auto effort = request.find("reasoning_effort"); effort != request.end() && !allowed_efforts.empty()) {
    const bool known = effort->is_string() &&
                       std::find(allowed_efforts.begin(), allowed_efforts.end(), effort->get<std::string>()) !=
                           allowed_efforts.end();
    if (!known) {
      std::string list;
      for (const auto& e : allowed_efforts) list += (list.empty() ? "" : ", ") + e;
      throw std::invalid_argument("chat request 'reasoning_effort' is " + effort->dump() + "; allowed: " + list +
                                  " (the API would silently ignore an unknown value)");
    }
  }
}

ChatClient::ChatClient(ClientConfig config, std::shared_ptr<Clock> clock)
    : config_(std::move(config)), clock_(std::move(clock)), shared_(std::make_shared<Shared>()) {
  global_curl_init();
  if (!clock_) throw std::invalid_argument("ChatClient needs a clock");
  endpoint_ = parse_endpoint(config_.base_url);
  if (config_.api_key_env.empty()) throw std::invalid_argument("ClientConfig.api_key_env must name a variable");
  if (config_.max_in_flight == 0) throw std::invalid_argument("ClientConfig.max_in_flight must be at least 1");
  config_.retry.check();
  if (config_.connect_timeout.count() <= 0 || config_.total_timeout.count() <= 0 ||
      config_.stall_timeout.count() <= 0) {
    throw std::invalid_argument("ClientConfig connect, total and stall timeouts must be positive");
  }
  shared_->max_in_flight = config_.max_in_flight;
  if (config_.requests_per_second > 0) {
    shared_->request_bucket = std::make_unique<TokenBucket>(config_.requests_per_second,
                                                            std::max(1.0, config_.request_burst), clock_);
  }
  if (config_.tokens_per_minute > 0) {
    const double burst = config_.token_burst > 0 ? config_.token_burst : config_.tokens_per_minute;
    shared_->token_bucket = std::make_unique<TokenBucket>(config_.tokens_per_minute / 60.0, burst, clock_);
  }
}

bool ChatClient::api_key_present() const {
  const char* value = std::getenv(config_.api_key_env.c_str());
  return value != nullptr && *value != '\0';
}

namespace {

struct AttemptSetup {
  const Endpoint* endpoint;
  const ClientConfig* config;
  Clock* clock;
  const std::string* key;
  const std::string* body;
  bool stream;
};

// A 2xx answer: the streamed response from the decoder, or a non-streamed body (also when the server
// ignored "stream": true), into `out`; an error inside either becomes out's class and message.
void decode_success(Transfer& t, long status, AttemptOutcome& out) {
  if (t.use_decoder) {
    const bool clean_end = t.decoder->finish();
    const auto& acc = t.decoder->accumulator();
    if (acc.error()) {
      out.error_class = classify_stream_error(acc.error()->type, acc.error()->message);
      out.message = "error inside stream: " + acc.error()->type + ": " + acc.error()->message;
      return;
    }
    out.response = acc.response();
    if (out.response.finish_reason.empty()) {
      out.error_class = ErrorClass::transport;
      out.message = std::string("stream ended before a finish_reason") + (acc.done() ? "" : " and without [DONE]") +
                    (clean_end ? "" : " (cut inside an event)");
      out.response = ChatResponse{};
    }
    return;
  }
  // A non-streamed body (also when the server ignored "stream": true).
  const auto json = nlohmann::json::parse(t.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    out.error_class = ErrorClass::server;
    out.message = "response body is not JSON (" + std::to_string(t.body.size()) + " bytes)";
    return;
  }
  if (json.is_object() && json.contains("error") && !json["error"].is_null()) {
    const auto& err = json["error"];
    // Fields of the wrong type read as absent (a server's error body is untrusted input).
    auto text_at = [&err](const char* key) {
      const auto it = err.is_object() ? err.find(key) : err.end();
      return it != err.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string type = text_at("type");
    const std::string msg = err.is_object() ? text_at("message") : err.dump();
    out.error_class = classify_stream_error(type, msg);
    out.message = "error body with HTTP " + std::to_string(status) + ": " + msg;
    return;
  }
  try {
    out.response = parse_chat_completion(json);
  } catch (const std::exception& e) {
    out.error_class = ErrorClass::server;
    out.message = std::string("malformed completion body: ") + e.what();
  }
}

AttemptOutcome perform_attempt(const AttemptSetup& s) {
  AttemptOutcome out;
  std::unique_ptr<CURL, EasyDeleter> handle(curl_easy_init());
  if (!handle) throw std::runtime_error("libcurl could not create a transfer handle");
  CURL* h = handle.get();

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&headers](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (!next) throw std::runtime_error("libcurl could not allocate a header list");
    headers.release();
    headers.reset(next);
  };
  add_header("Content-Type: application/json");
  add_header(s.stream ? "Accept: text/event-stream" : "Accept: application/json");
  add_header("Expect:");  // no 100-continue round trip for large prompts
  if (!s.key->empty()) {
    std::string auth = "Authorization: Bearer " + *s.key;
    add_header(auth);
    ScopedSecret::wipe(auth);
  }

  Transfer t;
  t.handle = h;
  t.want_stream = s.stream;
  t.clock = s.clock;
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string url = s.endpoint->chat_completions_url();

  t.stop = s.config->stop;
  t.stall_timeout = s.config->stall_timeout;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  set_request_basics(h, headers.get(), t);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, s.body->data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(s.body->size()));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "k3lab/0.1");
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s.config->connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(s.config->total_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);

  t.start = s.clock->now();
  t.last_payload = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(h);
  const auto end = s.clock->now();
  headers.reset();  // frees curl's copy of the Authorization line as early as possible

  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  out.status = status;
  out.headers = std::move(t.headers);
  out.latency_ms = to_ms(end - t.start);
  if (t.first_token) out.ttft_ms = to_ms(*t.first_token - t.start);

  if (rc != CURLE_OK) {
    if (t.stopped) throw CallInterrupted("the call was interrupted (stop requested) while in flight");
    if (t.stalled) {
      out.error_class = ErrorClass::transport;
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", std::chrono::duration<double>(s.config->stall_timeout).count());
      out.message = std::string("stalled: no payload byte for ") + seconds +
                    " s (SSE comment lines such as keep-alives do not count; the protocol's transport.stall_timeout_s, "
                    "or --stall-timeout)";
      return out;
    }
    if (rc == CURLE_WRITE_ERROR && !t.decode_error.empty()) {
      out.error_class = ErrorClass::server;
      out.message = "malformed stream from server: " + t.decode_error;
    } else {
      out.error_class = ErrorClass::transport;
      out.message = std::string(curl_easy_strerror(rc)) + (errbuf[0] ? std::string(": ") + errbuf : "");
    }
    return out;
  }
  if (status < 200 || status >= 300) {
    out.error_class = classify(static_cast<int>(status), t.body);
    out.message = "HTTP " + std::to_string(status) + ": " + error_message_of(t.body);
    out.retry_after = parse_retry_after(out.headers, s.clock->utc_now());
    return out;
  }
  decode_success(t, status, out);
  return out;
}

void record_headers(const ClientConfig& config, const std::map<std::string, std::string>& headers,
                    CallRecord& record) {
  for (const auto& name : config.request_id_headers) {
    if (const auto it = headers.find(ascii_lower(name)); it != headers.end()) record.request_ids[it->first] = it->second;
  }
  for (const auto& name : config.platform_headers) {
    if (const auto it = headers.find(ascii_lower(name)); it != headers.end()) {
      record.platform_headers[it->first] = it->second;
    }
  }
  record.simulated = headers.count("x-k3lab-mock") > 0;
}

}  // namespace

ChatResult ChatClient::complete(const nlohmann::json& request, std::size_t call_index,
                                const std::string& expected_failure) const {
  validate_chat_request(request, config_.allowed_reasoning_efforts);
  ScopedSecret key(config_.api_key_env);
  if (key.value().empty() && !endpoint_.loopback) {
    throw std::runtime_error(config_.api_key_env + " is not set: export it to call " + endpoint_.host +
                             ", or run without a key against the built-in mock server (k3lab mock-server)");
  }
  check_key_characters(key.value(), config_.api_key_env);
  const bool stream = request.value("stream", false);
  nlohmann::json payload = request;
  if (stream && !payload.contains("stream_options")) payload["stream_options"] = {{"include_usage", true}};
  const std::string body = payload.dump();  // serialized once: every retry sends these exact bytes
  const double token_cost = static_cast<double>(approx_token_count(body) + completion_allowance(request));

  auto logger = spdlog::default_logger();
  ChatResult result;
  CallRecord& rec = result.record;
  rec.call_index = call_index;
  rec.endpoint = endpoint_.base_url;
  rec.streamed = stream;
  rec.model_requested = request["model"].get<std::string>();
  rec.started_utc = format_utc(clock_->utc_now());
  const auto wall_start = clock_->now();

  AttemptOutcome outcome;
  for (;;) {
    if (config_.stop && config_.stop->load()) throw CallInterrupted("the call was interrupted (stop requested)");
    if (shared_->request_bucket) shared_->request_bucket->acquire(1);
    if (shared_->token_bucket) shared_->token_bucket->acquire(token_cost);
    shared_->acquire_slot();
    ++rec.attempts;
    logger->debug("call {} attempt {}: POST {} ({} bytes, stream={})", call_index, rec.attempts,
                  endpoint_.chat_completions_url(), body.size(), stream);
    try {
      AttemptSetup setup{&endpoint_, &config_, clock_.get(), &key.value(), &body, stream};
      outcome = perform_attempt(setup);
    } catch (...) {
      shared_->release_slot();
      throw;
    }
    shared_->release_slot();
    outcome.message = scrub_reasoning_echo(redact(outcome.message, key.value()), request.value("messages", nlohmann::json()));
    if (outcome.error_class == ErrorClass::none) break;
    rec.attempt_errors.emplace_back(to_string(outcome.error_class));
    rec.retry_after_ms.reset();
    if (outcome.retry_after) rec.retry_after_ms = to_ms(*outcome.retry_after);
    if (!config_.retry.may_retry(outcome.error_class, rec.attempts)) {
      if (expected_failure.empty()) {
        logger->warn("call {} failed ({}) after {} attempt(s): {}", call_index, to_string(outcome.error_class),
                     rec.attempts, outcome.message);
      } else {
        logger->info("call {}: {} as designed ({}): {}", call_index, to_string(outcome.error_class), expected_failure,
                     outcome.message);
      }
      break;
    }
    ++(is_overload_retryable(outcome.error_class) ? rec.overload_retries : rec.transport_retries);
    const Nanos wait = config_.retry.wait_before_next(rec.attempts, outcome.retry_after, call_index);
    logger->warn("call {} attempt {} failed ({}): {}; retrying in {:.3f} s", call_index, rec.attempts,
                 to_string(outcome.error_class), outcome.message, std::chrono::duration<double>(wait).count());
    rec.waited_ms += to_ms(wait);
    if (!clock_->sleep_unless_stopped(wait, config_.stop)) {
      throw CallInterrupted("the call was interrupted (stop requested) while waiting to retry");
    }
  }

  rec.finished_utc = format_utc(clock_->utc_now());
  rec.wall_ms = to_ms(clock_->now() - wall_start);
  rec.http_status = static_cast<int>(outcome.status);
  rec.latency_ms = outcome.latency_ms;
  rec.ttft_ms = outcome.ttft_ms;
  record_headers(config_, outcome.headers, rec);
  rec.error_class = outcome.error_class;
  rec.error_message = outcome.message;
  if (outcome.error_class == ErrorClass::none) {
    const ChatResponse& r = outcome.response;
    rec.model = r.model;
    rec.response_id = r.id;
    rec.system_fingerprint = r.system_fingerprint;
    rec.finish_reason = r.finish_reason;
    rec.tool_call_count = r.tool_calls.size();
    rec.reasoning_present = r.has_reasoning;
    if (r.has_reasoning) rec.reasoning_sha256 = core::sha256_hex(r.reasoning_content);
    if (r.usage) {
      rec.usage_reported = true;
      rec.prompt_tokens = r.usage->prompt_tokens;
      rec.cached_tokens = r.usage->cached_tokens;
      rec.completion_tokens = r.usage->completion_tokens;
      rec.reasoning_tokens = r.usage->reasoning_tokens;
    }
    result.response = std::move(outcome.response);
  }
  return result;
}

std::vector<std::string> ChatClient::list_models() const {
  ScopedSecret key(config_.api_key_env);
  if (key.value().empty() && !endpoint_.loopback) {
    throw std::runtime_error(config_.api_key_env + " is not set: export it to list the models of " + endpoint_.host);
  }
  check_key_characters(key.value(), config_.api_key_env);
  std::unique_ptr<CURL, EasyDeleter> handle(curl_easy_init());
  if (!handle) throw std::runtime_error("libcurl could not create a transfer handle");
  CURL* h = handle.get();
  std::unique_ptr<curl_slist, SlistDeleter> headers(curl_slist_append(nullptr, "Accept: application/json"));
  if (!key.value().empty()) {
    std::string auth = "Authorization: Bearer " + key.value();
    curl_slist* next = curl_slist_append(headers.get(), auth.c_str());
    ScopedSecret::wipe(auth);
    if (!next) throw std::runtime_error("libcurl could not allocate a header list");
    headers.release();
    headers.reset(next);
  }
  Transfer t;
  t.handle = h;
  t.clock = clock_.get();
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string url = endpoint_.models_url();
  t.stop = config_.stop;
  t.stall_timeout = config_.stall_timeout;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  set_request_basics(h, headers.get(), t);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 60'000L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  const CURLcode rc = curl_easy_perform(h);
  headers.reset();
  if (t.stopped) throw CallInterrupted("GET " + url + " was interrupted (stop requested)");
  if (rc != CURLE_OK) {
    throw std::runtime_error(redact("GET " + url + " failed: " + curl_easy_strerror(rc) + " " + errbuf, key.value()));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    throw std::runtime_error(redact("GET " + url + " returned HTTP " + std::to_string(status) + " (" +
                                        std::string(to_string(classify(static_cast<int>(status), t.body))) +
                                        "): " + error_message_of(t.body),
                                    key.value()));
  }
  const auto json = nlohmann::json::parse(t.body, nullptr, false);
  if (!json.is_object() || !json.contains("data") || !json["data"].is_array()) {
    throw std::runtime_error("GET " + url + " did not return {\"data\": [...]}");
  }
  std::vector<std::string> ids;
  for (const auto& m : json["data"]) {
    if (m.is_object() && m.contains("id") && m["id"].is_string()) ids.push_back(m["id"].get<std::string>());
  }
  return ids;
}

}  // namespace k3lab::api
