#include "k3lab/exec/sbatch_script.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace k3lab::exec {
namespace {

bool valid_option_name(const std::string& name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::string option_line(const SbatchOption& option) {
  if (option.value.empty()) return "#SBATCH --" + option.name + "\n";
  // sbatch reads #SBATCH lines itself (no shell): a value with blanks needs double quotes.
  const bool blanks = option.value.find_first_of(" \t") != std::string::npos;
  return "#SBATCH --" + option.name + "=" + (blanks ? "\"" + option.value + "\"" : option.value) + "\n";
}

void require_absolute(const std::filesystem::path& path, const char* what) {
  if (!path.is_absolute()) {
    throw std::invalid_argument(std::string("sbatch script: the ") + what + " must be an absolute path (array tasks "
                                "run elsewhere), got \"" + path.string() + "\"");
  }
}

}  // namespace

std::vector<SbatchOption> parse_slurm_options(const std::vector<std::string>& items) {
  // k3lab derives these from the run: letting --slurm-opt change them would break the unit mapping.
  static const std::set<std::string> reserved = {"array", "requeue", "no-requeue", "parsable", "wrap"};
  std::vector<SbatchOption> options;
  for (const auto& item : items) {
    std::string text = item;
    if (text.rfind("--", 0) == 0) {
      text = text.substr(2);
    } else if (!text.empty() && text[0] == '-') {
      throw std::invalid_argument("--slurm-opt \"" + item + "\": use sbatch's long option name, e.g. "
                                  "--slurm-opt partition=gpu instead of -p gpu");
    }
    const auto eq = text.find('=');
    SbatchOption option{text.substr(0, eq), eq == std::string::npos ? "" : text.substr(eq + 1)};
    if (option.name.find(' ') != std::string::npos) {
      throw std::invalid_argument("--slurm-opt \"" + item + "\": write name=value without spaces around the name, "
                                  "e.g. --slurm-opt time=04:00:00");
    }
    if (!valid_option_name(option.name)) {
      throw std::invalid_argument("--slurm-opt \"" + item + "\": \"" + option.name +
                                  "\" is not an sbatch long option name (lower-case letters, digits, '-'), e.g. "
                                  "--slurm-opt mem=32G");
    }
    if (reserved.count(option.name)) {
      throw std::invalid_argument("--slurm-opt " + option.name + ": k3lab sets --" + option.name +
                                  " itself (the array comes from the pending units: use --shard N to change the "
                                  "number of tasks; use --requeue to let Slurm requeue preempted tasks)");
    }
    if (eq != std::string::npos && option.value.empty()) {
      throw std::invalid_argument("--slurm-opt \"" + item + "\": empty value; write " + option.name +
                                  "=<value>, or just " + option.name + " for a flag");
    }
    if (option.value.find_first_of("\n\r\"") != std::string::npos || option.value.find('\0') != std::string::npos) {
      throw std::invalid_argument("--slurm-opt \"" + item + "\": the value may not contain newlines or double quotes");
    }
    options.push_back(std::move(option));
  }
  return options;
}

std::vector<SbatchOption> merge_options(const std::vector<SbatchOption>& defaults,
                                        const std::vector<SbatchOption>& overrides) {
  std::set<std::string> overridden;
  for (const auto& o : overrides) overridden.insert(o.name);
  std::vector<SbatchOption> merged;
  for (const auto& d : defaults) {
    if (!overridden.count(d.name)) merged.push_back(d);
  }
  merged.insert(merged.end(), overrides.begin(), overrides.end());
  return merged;
}

std::string array_ranges(std::vector<std::size_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

namespace {

std::optional<std::size_t> count_option(const std::vector<SbatchOption>& options, const std::string& name) {
  std::optional<std::size_t> value;
  for (const auto& o : options) {
    if (o.name != name) continue;
    if (o.value.empty() || o.value.size() > 6 || o.value.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(o.value) == 0) {
      throw std::invalid_argument("--slurm-opt " + name + "=" + o.value +
                                  ": k3lab needs a plain positive count here to size data-parallel tasks");
    }
    value = std::stoul(o.value);
  }
  return value;
}

}  // namespace

std::size_t ranks_per_task(const std::vector<SbatchOption>& options) {
  if (const auto n = count_option(options, "ntasks")) return *n;
  const auto per_node = count_option(options, "ntasks-per-node");
  if (!per_node) return 1;
  return *per_node * count_option(options, "nodes").value_or(1);
}

std::string task_worker_name(const std::string& job_id, std::size_t task) {
  return "slurm-" + job_id + "-" + std::to_string(task);
}

std::string render_sbatch_script(const SbatchScriptSpec& spec) {
  require_absolute(spec.run_dir, "run dir");
  require_absolute(spec.k3lab_binary, "k3lab binary");
  require_absolute(spec.workdir, "working directory");
  require_absolute(spec.protocol_dir, "protocol directory");
  if (spec.tasks.empty()) throw std::invalid_argument("sbatch script: no array tasks (nothing is pending)");
  if (spec.layout == TaskLayout::Shards) {
    if (spec.shard_count == 0) throw std::invalid_argument("sbatch script: shard count 0");
    for (const auto& t : spec.tasks) {
      if (t.index >= spec.shard_count) {
        throw std::invalid_argument("sbatch script: shard " + std::to_string(t.index) + " is not below the count " +
                                    std::to_string(spec.shard_count));
      }
    }
  } else {
    for (const auto& t : spec.tasks) {
      if (t.units.size() != 1) throw std::invalid_argument("sbatch script: a per-unit task must name exactly one unit");
    }
  }
  std::vector<std::size_t> indices;
  for (const auto& t : spec.tasks) indices.push_back(t.index);
  if (std::set<std::size_t>(indices.begin(), indices.end()).size() != indices.size()) {
    throw std::invalid_argument("sbatch script: two tasks share an array index");
  }

  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH --array=" << array_ranges(indices) << "\n";
  s << "#SBATCH --" << (spec.requeue ? "requeue" : "no-requeue") << "\n";
  for (const auto& option : spec.options) s << option_line(option);
  s << "#\n";
  s << "# Written by `k3lab run " << spec.experiment_id << " --executor slurm` (profile " << spec.profile << ").\n";
  s << "# Run dir: " << spec.run_dir.string() << "\n";
  if (spec.layout == TaskLayout::PerUnit) {
    s << "# One array task per unit: the array index is the unit's position in the frozen plan.\n";
  } else {
    s << "# " << spec.shard_count << " shards: array task i runs the pending units whose plan position % "
      << spec.shard_count << " == i.\n";
  }
  s << "# Each task appends to its own ledger shard, ledger.slurm-<job>-<task>.jsonl, and skips units that\n"
       "# already have a terminal record or a live lease of another process (leases/ in the run dir), so a\n"
       "# requeued or resubmitted task never redoes a finished unit nor runs one twice.\n";
  for (const auto& note : spec.resource_notes) s << "# Resources: " << note << "\n";
  s << "set -euo pipefail\n";
  s << "export K3LAB_PROTOCOL_DIR=" << shell_quote(spec.protocol_dir.string()) << "\n";
  s << "task=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}\"\n";
  s << "worker=\"slurm-${SLURM_ARRAY_JOB_ID}-${task}\"\n";
  std::string selection;
  if (spec.layout == TaskLayout::PerUnit) {
    s << "case \"$task\" in\n";
    for (const auto& t : spec.tasks) s << "  " << t.index << ") unit=" << shell_quote(t.units.front()) << " ;;\n";
    s << "  *) echo \"k3lab: array task $task is not part of this submission\" >&2; exit 2 ;;\n";
    s << "esac\n";
    selection = "--unit \"$unit\"";
  } else {
    selection = "--shard \"${task}/" + std::to_string(spec.shard_count) + "\"";
  }
  std::string launcher;
  if (spec.ranks_per_task > 1) {
    s << "# Data parallel: srun starts " << spec.ranks_per_task
      << " ranks of k3lab per task; rank 0 writes the ledger and checkpoints,\n"
         "# and a rank that dies is noted (docs/slurm.md). The port is unique per job on shared nodes.\n";
    // `export X="$(...)"` hides the substitution's failure from set -e: assign, then check the value,
    // so that a failing scontrol and an empty answer both stop the task with the same message.
    // sed reads to the end: `head -n 1` would exit early and, under pipefail, scontrol's SIGPIPE would fail the
    // pipeline and wipe a good address (a race that depends on the node count and on timing).
    s << "MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)\" || MASTER_ADDR=\"\"\n";
    s << "if [ -z \"$MASTER_ADDR\" ]; then echo \"k3lab: no first host in SLURM_JOB_NODELIST='${SLURM_JOB_NODELIST:-}' "
         "(scontrol show hostnames)\" >&2; exit 1; fi\n";
    s << "MASTER_PORT=\"$((20000 + SLURM_JOB_ID % 40000))\"\n";
    s << "export MASTER_ADDR MASTER_PORT\n";
    s << "# One rank's exit ends the step: a non-zero exit at once, any other after " << kRankExitWaitSeconds
      << " s.\n";
    launcher = "srun --ntasks=" + std::to_string(spec.ranks_per_task) + " --kill-on-bad-exit=1 --wait=" +
               std::to_string(kRankExitWaitSeconds) + " ";
  }
  s << "exec " << launcher << shell_quote(spec.k3lab_binary.string()) << " run " << shell_quote(spec.experiment_id)
    << " --profile " << shell_quote(spec.profile) << " --run-dir " << shell_quote(spec.run_dir.string())
    << " --worker \"$worker\" " << selection;
  for (const auto& a : spec.run_arguments) s << " " << shell_quote(a);
  s << "\n";
  return s.str();
}

}  // namespace k3lab::exec
