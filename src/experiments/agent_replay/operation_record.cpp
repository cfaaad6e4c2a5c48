#include "agent_replay/operation_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "k3lab/core/sha256.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

const std::set<std::string>& known_ops() {
  static const std::set<std::string> ops = {"start", "message", "dispatch", "omitted", "call", "resume"};
  return ops;
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_line(const std::filesystem::path& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error("agent-replay: cannot open the operation record " + path.string() + ": " +
                             std::strerror(errno));
  }
  const ssize_t written = ::write(fd, line.data(), line.size());
  const bool synced = written == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!synced) {
    throw std::runtime_error("agent-replay: writing the operation record " + path.string() + " failed: " +
                             std::strerror(saved) + " (check free disk space)");
  }
}

void apply_entry(RunState& s, const nlohmann::json& e) {
  const std::string op = e.at("op").get<std::string>();
  if (op == "message") {
    const nlohmann::json& m = e.at("message");
    s.messages.push_back(m);
    const auto reasoning = e.find("reasoning");
    const bool present = reasoning != e.end() && reasoning->value("present", false);
    s.reasoning_sha256.push_back(present ? reasoning->value("sha256", "") : std::string());
    if (m.value("role", "") == "assistant") {
      ++s.model_turns;
      s.last_finish_reason = e.value("finish_reason", "");
      s.last_calls.clear();
      if (const auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array()) {
        for (const auto& c : *calls) {
          s.last_calls.push_back({c.value("id", ""), c["function"].value("name", ""), c["function"].value("arguments", "")});
        }
      }
    } else if (m.value("role", "") == "tool") {
      s.settled[m.value("tool_call_id", "")] = "answered";
    }
  } else if (op == "dispatch") {
    s.dispatches[e.at("tool_call_id").get<std::string>()].push_back(e);
    s.mutation_duplicated = s.mutation_duplicated || e.value("injected_duplicate", false);
  } else if (op == "omitted") {
    s.settled[e.at("tool_call_id").get<std::string>()] = "omitted";
    s.omitted_any = true;
  } else if (op == "call") {
    s.calls.push_back(e);
  } else if (op == "resume") {
    ++s.resumes;
  }
}

}  // namespace

std::optional<RecordedCall> RunState::next_unsettled_call() const {
  for (const auto& call : last_calls) {
    if (!settled.count(call.id)) return call;
  }
  return std::nullopt;
}

bool contains_reasoning_content(const nlohmann::json& value) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (key == "reasoning_content" || contains_reasoning_content(child)) return true;
    }
  } else if (value.is_array()) {
    for (const auto& child : value) {
      if (contains_reasoning_content(child)) return true;
    }
  }
  return false;
}

OperationRecord::OperationRecord(std::filesystem::path path) : path_(std::move(path)) {
  if (!std::filesystem::exists(path_)) return;
  const std::string text = read_all(path_);
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      // A torn last line: the process ended inside a write, so the operation never took effect.
      std::filesystem::resize_file(path_, start);
      break;
    }
    ++line_number;
    auto entry = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                                       text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    if (entry.is_discarded() || !entry.is_object() || !entry.contains("op") || !entry["op"].is_string()) {
      throw std::runtime_error("agent-replay: operation record " + path_.string() + " line " +
                               std::to_string(line_number) +
                               " is not an operation object; the run dir is damaged (move the file aside to restart "
                               "this run from scratch)");
    }
    entries_.push_back(std::move(entry));
    start = end + 1;
  }
  state_ = replay(entries_);
}

void OperationRecord::append(nlohmann::json entry) {
  if (!entry.is_object() || !entry.contains("op") || !entry["op"].is_string() ||
      !known_ops().count(entry["op"].get<std::string>())) {
    throw std::invalid_argument("agent-replay: operation record entry without a known \"op\": " + entry.dump());
  }
  if (contains_reasoning_content(entry)) {
    throw std::invalid_argument("agent-replay: refusing to write reasoning_content to the operation record " +
                                path_.string() + "; keep only its presence, SHA-256 and size");
  }
  std::filesystem::create_directories(path_.parent_path());
  write_line(path_, entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  apply_entry(state_, entry);
  entries_.push_back(std::move(entry));
}

RunState OperationRecord::replay(const std::vector<nlohmann::json>& entries) {
  RunState state;
  for (const auto& e : entries) apply_entry(state, e);
  return state;
}

RedactedAssistant redact_assistant(const nlohmann::json& message) {
  RedactedAssistant out;
  out.message = message;
  out.reasoning = {{"present", false}};
  if (const auto it = message.find("reasoning_content"); it != message.end()) {
    const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    out.reasoning = {{"present", true}, {"sha256", core::sha256_hex(text)}, {"bytes", text.size()}};
    out.message.erase("reasoning_content");
  }
  return out;
}

std::string ReasoningVault::keep(const std::string& reasoning) {
  std::string sha = core::sha256_hex(reasoning);
  texts_.emplace(sha, reasoning);
  return sha;
}

const std::string* ReasoningVault::find(const std::string& sha256) const {
  const auto it = texts_.find(sha256);
  return it == texts_.end() ? nullptr : &it->second;
}

}  // namespace k3lab::experiments::agent_replay
