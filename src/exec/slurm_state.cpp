#include "k3lab/exec/slurm_state.hpp"

#include "k3lab/experiments/runner.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace k3lab::exec {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (auto& line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

// "CANCELLED by 0" -> "CANCELLED"; a trailing '+' marks a truncated column in sacct's fixed layout.
std::string base_state(const std::string& raw) {
  std::string word = trim(raw);
  const auto space = word.find(' ');
  if (space != std::string::npos) word = word.substr(0, space);
  while (!word.empty() && word.back() == '+') word.pop_back();
  return word;
}

std::size_t parse_index(const std::string& text, const std::string& context) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error("cannot read array index \"" + text + "\" in \"" + context + "\"");
  }
  return static_cast<std::size_t>(std::stoull(text));
}

std::string null_as_empty(const std::string& value) {
  return (value == "(null)" || value == "None assigned" || value == "None") ? "" : value;
}

// Adds one TaskState per index of `indices` ("" -> a plain job without array index).
void add_tasks(std::vector<TaskState>& out, TaskState base, const std::string& indices, const std::string& line) {
  if (indices.empty()) {
    out.push_back(std::move(base));
    return;
  }
  std::vector<std::size_t> expanded;
  try {
    expanded = expand_array_indices(indices);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (line \"" + line + "\")");
  }
  for (const auto index : expanded) {
    base.task = index;
    out.push_back(base);
  }
}

}  // namespace

std::vector<std::size_t> expand_array_indices(const std::string& spec) {
  std::string body = trim(spec);
  if (!body.empty() && body.front() == '[') {
    if (body.back() != ']') throw std::runtime_error("unbalanced brackets in array indices \"" + spec + "\"");
    body = body.substr(1, body.size() - 2);
  }
  const auto throttle = body.find('%');
  if (throttle != std::string::npos) body = body.substr(0, throttle);
  std::vector<std::size_t> indices;
  for (const auto& item : split(body, ',')) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      indices.push_back(parse_index(item, spec));
      continue;
    }
    std::string last_text = item.substr(dash + 1);
    std::size_t step = 1;
    if (const auto colon = last_text.find(':'); colon != std::string::npos) {
      step = parse_index(last_text.substr(colon + 1), spec);
      last_text = last_text.substr(0, colon);
      if (step == 0) throw std::runtime_error("array index step 0 in \"" + spec + "\"");
    }
    const auto first = parse_index(item.substr(0, dash), spec);
    const auto last = parse_index(last_text, spec);
    if (last < first) throw std::runtime_error("descending array index range in \"" + spec + "\"");
    for (std::size_t i = first; i <= last; i += step) indices.push_back(i);
  }
  if (indices.empty()) throw std::runtime_error("no array indices in \"" + spec + "\"");
  return indices;
}

const std::vector<SlurmStateRule>& slurm_state_table() {
  static const std::vector<SlurmStateRule> table = {
      {"PENDING", TaskEnd::Active, "queued: the task may still run the unit"},
      {"CONFIGURING", TaskEnd::Active, "starting"},
      {"RUNNING", TaskEnd::Active, "running: it holds the unit's lease"},
      {"COMPLETING", TaskEnd::Active, "ending"},
      {"REQUEUED", TaskEnd::Active, "requeued under the same job and task id"},
      {"REQUEUE_FED", TaskEnd::Active, "requeued"},
      {"REQUEUE_HOLD", TaskEnd::Active, "requeued and held"},
      {"RESIZING", TaskEnd::Active, "resizing"},
      {"SUSPENDED", TaskEnd::Active, "suspended: its lease may expire; a resumed task that lost it stops"},
      {"STOPPED", TaskEnd::Active, "stopped by a signal"},
      {"SIGNALING", TaskEnd::Active, "being signalled"},
      {"STAGE_OUT", TaskEnd::Active, "staging out"},
      {"SPECIAL_EXIT", TaskEnd::Active, "held after a special exit"},
      {"RESV_DEL_HOLD", TaskEnd::Active, "held"},
      {"POWER_UP_NODE", TaskEnd::Active, "waiting for its node"},
      {"COMPLETED", TaskEnd::Completed, "k3lab exited 0"},
      {"NODE_FAIL", TaskEnd::Interrupted,
       "Slurm lost the node (often slurmd or the network, while k3lab keeps running): pending once the lease expires"},
      {"TIMEOUT", TaskEnd::Interrupted, "its time limit: pending; resumes from the unit's last checkpoint"},
      {"PREEMPTED", TaskEnd::Interrupted, "preempted: pending (or requeued with --requeue)"},
      {"CANCELLED", TaskEnd::Interrupted, "cancelled: pending"},
      {"DEADLINE", TaskEnd::Interrupted, "its deadline passed: pending"},
      {"BOOT_FAIL", TaskEnd::Interrupted, "its node did not boot: pending"},
      {"REVOKED", TaskEnd::Interrupted, "revoked (federation): pending"},
      {"FAILED", TaskEnd::Interrupted,
       "a non-zero exit: by exit_code_table, pending, or an error that needs a person"},
      {"OUT_OF_MEMORY", TaskEnd::OutOfMemory,
       "its memory limit: a failure of the arm for a training unit (the protocols count OOM as one), pending "
       "otherwise"},
  };
  return table;
}

const std::vector<ExitCodeRule>& exit_code_table() {
  static const std::vector<ExitCodeRule> table = {
      {experiments::kExitOk, false, "ok"},
      {experiments::kExitError, false,
       "a runtime error or a fault of the machine (disk full, a lost rank or lease): pending, runs again"},
      {experiments::kExitUsage, true,
       "a bad command line, or a checkpoint it must not resume (another world size or configuration): fix the "
       "submission"},
      {experiments::kExitProtocol, true, "the protocol is invalid, not frozen, or differs from the run's"},
      {experiments::kExitWindowStopped, true, "the protocol's window rule stopped the run"},
      {experiments::kExitInterrupted, false, "stopped by SIGINT/SIGTERM: pending, resumes"},
  };
  return table;
}

std::optional<int> exit_status(const std::string& exit_code) {
  const std::string status = exit_code.substr(0, exit_code.find(':'));
  if (status.empty() || status.size() > 3 || status.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(status);
}

TaskEnd classify(const TaskState& state) {
  const auto& table = slurm_state_table();
  const auto rule = std::find_if(table.begin(), table.end(), [&](const SlurmStateRule& r) { return state.state == r.state; });
  if (rule == table.end()) return TaskEnd::Unknown;
  if (state.state == "FAILED") {
    const auto status = exit_status(state.exit_code);
    for (const auto& code : exit_code_table()) {
      if (status && *status == code.code && code.deterministic) return TaskEnd::NeedsPerson;
    }
  }
  return rule->end;
}

std::string to_string(TaskEnd end) {
  switch (end) {
    case TaskEnd::Active: return "active";
    case TaskEnd::Completed: return "completed";
    case TaskEnd::Interrupted: return "interrupted";
    case TaskEnd::OutOfMemory: return "out-of-memory";
    case TaskEnd::NeedsPerson: return "needs-person";
    case TaskEnd::Unknown: return "unknown";
  }
  return "unknown";
}

std::vector<TaskState> parse_sacct(const std::string& text) {
  std::vector<TaskState> out;
  for (const auto& line : lines_of(text)) {
    const auto fields = split(line, '|');
    if (fields.size() < 5) {
      throw std::runtime_error("cannot read sacct line \"" + line +
                               "\": expected JobID|JobName|State|ExitCode|NodeList (sacct -P -n --format=...)");
    }
    const std::string id = trim(fields[0]);
    if (id.find('.') != std::string::npos || id.find('+') != std::string::npos) continue;  // a step or het part
    TaskState state;
    state.job_name = fields[1];
    state.state = base_state(fields[2]);
    state.exit_code = trim(fields[3]);
    state.node = null_as_empty(trim(fields[4]));
    const auto underscore = id.find('_');
    state.job_id = id.substr(0, underscore);
    if (state.job_id.empty() || state.job_id.find_first_not_of("0123456789") != std::string::npos) {
      throw std::runtime_error("cannot read the job id in sacct line \"" + line + "\"");
    }
    add_tasks(out, state, underscore == std::string::npos ? "" : id.substr(underscore + 1), line);
  }
  return out;
}

std::vector<TaskState> parse_scontrol(const std::string& text) {
  std::vector<TaskState> out;
  for (const auto& line : lines_of(text)) {
    std::map<std::string, std::string> fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0) continue;  // a value's continuation after a space
      fields.emplace(word.substr(0, eq), word.substr(eq + 1));
    }
    if (!fields.count("JobId") || !fields.count("JobState")) {
      throw std::runtime_error("cannot read scontrol line \"" + line.substr(0, 120) +
                               "\": expected JobId=... JobState=... (scontrol -o show job)");
    }
    TaskState state;
    state.job_name = fields.count("JobName") ? fields["JobName"] : "";
    state.state = base_state(fields["JobState"]);
    state.exit_code = fields.count("ExitCode") ? fields["ExitCode"] : "";
    state.node = fields.count("NodeList") ? null_as_empty(fields["NodeList"]) : "";
    const bool array = fields.count("ArrayJobId") && fields.count("ArrayTaskId");
    state.job_id = array ? fields["ArrayJobId"] : fields["JobId"];
    add_tasks(out, state, array ? fields["ArrayTaskId"] : "", line.substr(0, 120));
  }
  return out;
}

const TaskState* TaskStates::find(const std::string& job_id, std::size_t task) const {
  const auto it = tasks.find({job_id, task});
  return it == tasks.end() ? nullptr : &it->second;
}

TaskStates query_task_states(const CommandRunner& runner, const std::vector<std::string>& job_ids) {
  TaskStates states;
  if (job_ids.empty()) return states;
  std::set<std::string> seen;
  auto add = [&](const std::vector<TaskState>& parsed, const std::string& source) {
    for (const auto& t : parsed) {
      if (!t.task) continue;  // k3lab submits arrays only
      states.tasks[{t.job_id, *t.task}] = t;
      seen.insert(t.job_id);
    }
    if (!parsed.empty() && states.source.find(source) == std::string::npos) {
      states.source += (states.source.empty() ? "" : "+") + source;
    }
  };
  std::string ids;
  for (const auto& id : job_ids) ids += (ids.empty() ? "" : ",") + id;
  const auto sacct = runner({"sacct", "-X", "-P", "-n", "-j", ids, "--format=JobID,JobName,State,ExitCode,NodeList"});
  if (sacct.not_found) {
    states.notes.push_back("sacct is not installed");
  } else if (sacct.exit_code != 0) {
    const auto first = sacct.err.substr(0, sacct.err.find('\n'));
    states.notes.push_back("sacct: " + (first.empty() ? "exit code " + std::to_string(sacct.exit_code) : first));
  } else {
    add(parse_sacct(sacct.out), "sacct");
  }
  for (const auto& id : job_ids) {
    if (seen.count(id)) continue;
    const auto shown = runner({"scontrol", "-o", "show", "job", id});
    if (shown.not_found) {
      states.notes.push_back("scontrol is not installed");
      break;
    }
    if (shown.exit_code != 0) {
      if (shown.err.find("Invalid job id") == std::string::npos) {
        states.notes.push_back("scontrol show job " + id + ": " + shown.err.substr(0, shown.err.find('\n')));
      }
      continue;  // unknown to slurmctld: finished longer ago than MinJobAge, or never existed
    }
    add(parse_scontrol(shown.out), "scontrol");
  }
  return states;
}

std::size_t max_array_size(const CommandRunner& runner) {
  constexpr std::size_t kSlurmDefault = 1001;
  const auto shown = runner({"scontrol", "show", "config"});
  if (shown.exit_code != 0) return kSlurmDefault;
  for (const auto& line : lines_of(shown.out)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || trim(line.substr(0, eq)) != "MaxArraySize") continue;
    const std::string value = trim(line.substr(eq + 1));
    if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos) return std::stoull(value);
  }
  return kSlurmDefault;
}

}  // namespace k3lab::exec
