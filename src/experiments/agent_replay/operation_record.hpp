#pragma once
// The retained operation record of one agent run (DESIGN.md section 4: "a transport retry never
// repeats a mutation"). An append-only JSON-lines file in the run's artifacts; each line is one
// operation, written in one write(2) and fsync'ed before the run acts on it:
//
//   {"op":"start", unit, task_id, arm}
//   {"op":"message", message, [turn, finish_reason, reasoning:{present,sha256,bytes}]}
//       a message appended to the conversation; an assistant message is stored complete except for
//       its reasoning_content, of which only presence, SHA-256 and byte count are kept
//   {"op":"dispatch", turn, tool_call_id, tool, arguments, key_source, mutating, executed, replayed,
//       is_error, injected_duplicate, content}           one execution of a tool against the world
//   {"op":"omitted", turn, tool_call_id}                 a tool result deliberately not appended
//   {"op":"call", turn, try, request_sha256, effort, max_completion_tokens, tools_reordered, record}
//       one chat call (api::CallRecord, which holds no raw reasoning)
//   {"op":"resume", turn, try, after, wait_ms}           a retry continues from the record after
//                                                        the shared policy's wait (api::RetryPolicy)
//
// The conversation to send next, the turn count and which tool calls still need a dispatch are
// derived from the record alone (RunState), so a transport retry reopens the file and continues from
// what it says: a dispatched call is never dispatched again. Raw reasoning is never written: an
// exact replay re-attaches it from memory by its SHA-256 (ReasoningVault), which is why a run that
// lost its process cannot resume (see agent_run.hpp).
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::experiments::agent_replay {

// A tool call as the model returned it.
struct RecordedCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// What the record says about the run so far.
struct RunState {
  // The conversation in order. Assistant messages lack reasoning_content (see reasoning_sha256).
  std::vector<nlohmann::json> messages;
  // Per message: the SHA-256 of its reasoning_content, empty when it had none.
  std::vector<std::string> reasoning_sha256;
  int model_turns = 0;               // assistant messages received
  std::string last_finish_reason;    // of the latest assistant message
  std::vector<RecordedCall> last_calls;  // tool calls of the latest assistant message
  // Tool call ids already dispatched (each may have several dispatch entries: the injected duplicate).
  std::map<std::string, std::vector<nlohmann::json>> dispatches;
  // Tool call ids whose result was appended or deliberately omitted.
  std::map<std::string, std::string> settled;  // id -> "answered" | "omitted"
  bool omitted_any = false;
  bool mutation_duplicated = false;  // the injected duplicate dispatch happened
  std::vector<nlohmann::json> calls;  // "call" entries in order
  int resumes = 0;

  // The first tool call of the latest assistant message that is not settled yet.
  std::optional<RecordedCall> next_unsettled_call() const;
};

class OperationRecord {
 public:
  // Opens (creating when absent) the record at `path` and reads what it holds. Throws
  // std::runtime_error naming the file and line when a complete line is not a JSON object, and cuts a
  // torn last line (a write the process did not finish) before appending.
  explicit OperationRecord(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }
  const std::vector<nlohmann::json>& entries() const { return entries_; }
  const RunState& state() const { return state_; }
  bool empty() const { return entries_.empty(); }

  // Appends one operation (one line, fsync'ed) and applies it to state(). Throws std::invalid_argument
  // for an entry without a known "op", and std::invalid_argument when it carries "reasoning_content"
  // anywhere (raw reasoning must never reach a file).
  void append(nlohmann::json entry);

  // The state an entry list describes (what a reopened record rebuilds).
  static RunState replay(const std::vector<nlohmann::json>& entries);

 private:
  std::filesystem::path path_;
  std::vector<nlohmann::json> entries_;
  RunState state_;
};

// The assistant message for the record: `message` without reasoning_content, and its reasoning facts.
struct RedactedAssistant {
  nlohmann::json message;
  nlohmann::json reasoning;  // {"present":bool,"sha256":"...","bytes":N}
};
RedactedAssistant redact_assistant(const nlohmann::json& message);

// Raw reasoning kept in memory for exact replay, keyed by SHA-256. Never written anywhere.
class ReasoningVault {
 public:
  // Stores the text and returns its SHA-256.
  std::string keep(const std::string& reasoning);
  const std::string* find(const std::string& sha256) const;
  // Every kept text (to scrub error messages before they are recorded).
  const std::map<std::string, std::string>& all() const { return texts_; }
  void clear() { texts_.clear(); }

 private:
  std::map<std::string, std::string> texts_;
};

// Whether `value` contains a key named reasoning_content at any depth.
bool contains_reasoning_content(const nlohmann::json& value);

}  // namespace k3lab::experiments::agent_replay
