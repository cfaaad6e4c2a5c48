#include "k3lab/exec/slurm_executor.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/unit_lease.hpp"
#include "k3lab/exec/resources.hpp"
#include "k3lab/exec/sbatch_script.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::exec {
namespace {

constexpr const char* kAccountingWorker = "slurm-accounting";

// One submitter or failure recorder per run dir at a time (flock on slurm/submit.lock). Not held
// when another process holds it, or when the run dir is not writable (a read-only status).
class RunDirLock {
 public:
  explicit RunDirLock(const std::filesystem::path& run_dir) {
    const auto dir = run_dir / "slurm";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    fd_ = ::open((dir / "submit.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    held_ = fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  }
  ~RunDirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

// The run as its manifest and ledger define it (never the current protocol file).
struct PlannedRun {
  nlohmann::json manifest;
  std::unique_ptr<experiments::Experiment> experiment;  // null when its module cannot be loaded
  std::optional<core::Protocol> protocol;
  nlohmann::json parameters;
  std::vector<experiments::Unit> units;
  std::vector<std::string> plan;  // unit ids in frozen-plan order
  std::string load_error;
};

PlannedRun load_planned_run(const std::filesystem::path& run_dir, const core::LedgerContents& ledger,
                            const experiments::ExperimentFactory& factory) {
  PlannedRun run;
  run.manifest = core::read_manifest(run_dir);
  run.parameters = run.manifest.value("parameters", nlohmann::json::object());
  try {
    if (!factory) throw std::logic_error("no experiment module was given for " + run_dir.string());
    run.experiment = factory();
    run.protocol = core::protocol_from_document(run.manifest.at("protocol"), run_dir / "manifest.json");
    run.units = run.experiment->enumerate(*run.protocol, run.parameters);
  } catch (const std::exception& e) {
    run.experiment.reset();
    run.load_error = e.what();
  }
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") != "plan" || !r.contains("units")) continue;
    for (const auto& id : r["units"]) run.plan.push_back(id.get<std::string>());
    break;
  }
  if (run.plan.empty()) {
    for (const auto& u : run.units) run.plan.push_back(u.id);
  }
  return run;
}

std::set<std::string> terminal_units(const std::vector<nlohmann::json>& records) {
  std::set<std::string> done;
  for (const auto& r : records) {
    if (core::is_terminal_kind(r.value("kind", "")) && r.contains("unit")) done.insert(r["unit"].get<std::string>());
  }
  return done;
}

std::string window_stop_reason(const std::vector<nlohmann::json>& records) {
  for (const auto& r : records) {
    if (r.value("kind", "") == "window" && r.value("stop", false)) return r.value("reason", "stopped");
  }
  return "";
}

struct Reconciled {
  std::vector<JobRecord> jobs;
  TaskStates states;
  core::LedgerContents ledger;
  LeaseViews leases;                       // units without a terminal record that have a lease
  std::vector<nlohmann::json> owed;        // failure records owed (and written, when `write`)
  std::vector<nlohmann::json> notes_owed;  // non-terminal notes owed (and written, when `write`)
  std::size_t recorded = 0;
  std::string window_stop;
  std::vector<std::string> notes;
};

// Asks Slurm about every recorded job and, when `write`, appends the failure records owed for units
// that died with their task (ledger.slurm-accounting.jsonl), then applies the window rule.
bool ends_mid_line(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return false;
  in.seekg(-1, std::ios::end);
  return in.get() != '\n';
}

// A task that died mid-write leaves a torn last line in its shard, and no later writer reopens that
// shard: open it once, as the ledger does on resume, so the fragment is kept as an artifact, cut,
// and noted (ledger.hpp).
void repair_dead_shards(const std::filesystem::path& run_dir, const std::vector<JobRecord>& jobs,
                        const TaskStates& states, Reconciled& rec) {
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      const TaskState* state = task_state(job, t.index, states);
      if (!state || classify(*state) == TaskEnd::Active) continue;
      const std::string worker = task_worker_name(job.job_id, t.index);
      if (!ends_mid_line(run_dir / ("ledger." + worker + ".jsonl"))) continue;
      try {
        core::LedgerWriter repair(run_dir, worker);
      } catch (const std::exception& e) {
        rec.notes.push_back("the torn last line of " + worker + "'s shard was not repaired now: " + e.what());
      }
    }
  }
}

// The leases of the plan's units that have no terminal record, as this host sees them.
LeaseViews open_leases(const std::filesystem::path& run_dir, const PlannedRun& run,
                       const std::set<std::string>& done) {
  LeaseViews leases;
  const core::LeaseTable table(run_dir, core::lease_settings_from_environment());
  for (const auto& unit : run.plan) {
    if (done.count(unit)) continue;
    auto view = table.view(unit);
    if (view.state == core::LeaseState::Live || view.state == core::LeaseState::Stale) leases.emplace(unit, std::move(view));
  }
  return leases;
}

// Appends the failure records owed (each only while no live lease covers its unit) and applies the
// window rule after them.
void record_failures(const std::filesystem::path& run_dir, const PlannedRun& run, core::LedgerWriter& writer,
                     Reconciled& rec) {
  std::map<std::string, const experiments::Unit*> by_id;
  for (const auto& u : run.units) by_id[u.id] = &u;
  const auto labels = run.manifest.value("labels", nlohmann::json::array());
  const bool unfrozen = run.manifest.value("unfrozen", false);
  core::LeaseTable table(run_dir, core::lease_settings_from_environment());
  for (auto record : rec.owed) {
    const std::string unit_id = record["unit"].get<std::string>();
    const auto unit = by_id.find(unit_id);
    record["spec"] = unit == by_id.end() ? nlohmann::json(nullptr) : unit->second->spec;
    record["data"] = nlohmann::json::object();
    if (!labels.empty()) record["labels"] = labels;
    if (unfrozen) record["unfrozen"] = true;
    if (table.finish_unheld(unit_id, [&] { writer.append(std::move(record)); })) ++rec.recorded;
  }
  rec.ledger = core::read_ledger(run_dir);
  if (rec.recorded == 0 || !window_stop_reason(rec.ledger.records).empty()) return;
  experiments::RunRecords records{run.manifest, rec.ledger, run_dir};
  const auto verdict = run.experiment->check_window(*run.protocol, run.parameters, records.terminal_records());
  if (verdict.stop) {
    writer.append({{"kind", "window"}, {"stop", true}, {"reason", verdict.reason}, {"data", verdict.data}});
    rec.ledger = core::read_ledger(run_dir);
  }
}

// Asks Slurm about every recorded job and, when `write`, appends what the ends owe to the ledger
// (ledger.slurm-accounting.jsonl): notes for units left pending and for tasks that need a person, and
// failure records where the protocol makes the end an outcome; then applies the window rule.
Reconciled reconcile(const std::filesystem::path& run_dir, const PlannedRun& run, const CommandRunner& runner,
                     bool write) {
  Reconciled rec;
  rec.jobs = read_job_records(run_dir);
  rec.states = query_task_states(runner, job_ids(rec.jobs));
  if (write) repair_dead_shards(run_dir, rec.jobs, rec.states, rec);
  rec.ledger = core::read_ledger(run_dir);
  rec.leases = open_leases(run_dir, run, terminal_units(rec.ledger.records));
  const TaskEndRules rules{run.manifest.value("evidence_class", "") == "proxy-ablation"};
  rec.owed = slurm_failure_records(rec.ledger.records, rec.jobs, rec.states, rules, rec.leases);
  rec.notes_owed = slurm_end_notes(rec.ledger.records, rec.jobs, rec.states, rules);
  if (write && !rec.owed.empty() && !run.experiment) {
    rec.notes.push_back("Slurm failures were not recorded: the run's experiment module cannot be loaded (" +
                        run.load_error + ")");
  } else if (write && (!rec.owed.empty() || !rec.notes_owed.empty())) {
    core::LedgerWriter writer(run_dir, kAccountingWorker);
    for (auto note : rec.notes_owed) writer.append(std::move(note));
    if (!rec.owed.empty()) record_failures(run_dir, run, writer, rec);
    rec.ledger = core::read_ledger(run_dir);
  }
  rec.window_stop = window_stop_reason(rec.ledger.records);
  return rec;
}

std::string option_value(const std::vector<SbatchOption>& options, const std::string& name) {
  std::string value;
  for (const auto& o : options) {
    if (o.name == name) value = o.value;
  }
  return value;
}

// #SBATCH lines and Slurm's output patterns cannot carry these characters in a path.
void check_slurm_path(const std::filesystem::path& path, const char* what) {
  const std::string text = path.string();
  if (text.find_first_of(" \t\n\"'%\\") != std::string::npos) {
    throw std::invalid_argument(std::string("the ") + what + " " + text +
                                " contains a blank, quote, backslash or '%', which sbatch options cannot carry; "
                                "use a runs root without them (--out)");
  }
}

std::filesystem::path this_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this k3lab binary (/proc/self/exe): " + ec.message());
  return path;
}

}  // namespace

std::vector<std::string> task_run_arguments(const experiments::RunRequest& request) {
  std::vector<std::string> args;
  if (request.unfrozen) args.push_back("--unfrozen");
  for (const auto& s : request.set_overrides) {
    args.push_back("--set");
    args.push_back(s);
  }
  // Every execution option `k3lab run` can record, with the flag that sets it again in the task.
  static const std::map<std::string, std::string> flags = {
      {"base_url", "--base-url"},           {"served_model", "--served-model"},
      {"connect_timeout_s", "--connect-timeout"}, {"stall_timeout_s", "--stall-timeout"},
      {"call_timeout_s", "--call-timeout"}, {"requests_per_minute", "--requests-per-minute"},
      {"tokens_per_minute", "--tokens-per-minute"}, {"threads", "--threads"},
      {"device", "--device"},               {"data_dir", "--data-dir"}};
  for (auto it = request.options.begin(); it != request.options.end(); ++it) {
    const auto flag = flags.find(it.key());
    if (flag == flags.end()) {
      throw std::invalid_argument("--executor slurm cannot pass the execution option \"" + it.key() +
                                  "\" on to its array tasks; run without it, or extend task_run_arguments "
                                  "(src/exec/slurm_executor.cpp)");
    }
    args.push_back(flag->second);
    args.push_back(it->is_string() ? it->get<std::string>() : it->dump());
  }
  return args;
}

namespace {

void check_submit_request(const experiments::RunRequest& request, const SlurmSubmitOptions& options) {
  if (!request.worker.empty()) {
    throw std::invalid_argument("--worker cannot be combined with --executor slurm: each array task writes its own "
                                "ledger shard (ledger.slurm-<job>-<task>.jsonl)");
  }
  if (request.shard) {
    throw std::invalid_argument("--executor slurm takes --shard N (the number of array tasks), not i/n");
  }
  if (options.shard_count && *options.shard_count == 0) {
    throw std::invalid_argument("--shard 0: give the number of array tasks, e.g. --shard 8");
  }
  if (options.shard_count && !request.only_units.empty()) {
    throw std::invalid_argument("--unit and --shard N cannot be combined with --executor slurm: a shard task runs "
                                "every pending unit of its shard. Drop --shard to submit one task per named unit");
  }
}

// Creates or reopens the run dir with its plan recorded (a plan-only run). False when there is nothing
// to submit; `result` then says why.
bool plan_for_submission(const experiments::RunRequest& request, std::size_t ranks, SubmitResult& result) {
  experiments::RunRequest plan_request = request;
  plan_request.plan_only = true;
  plan_request.only_units.clear();
  if (ranks > 1) {
    const std::string device = request.options.value("device", std::string("auto"));
    plan_request.planned_data_parallel = {
        {"world_size", ranks},
        {"launcher", "srun"},
        {"backend", device == "cpu" ? "gloo" : device == "cuda" ? "nccl" : "gloo on CPU, nccl on CUDA"},
        {"device", device}};
  }
  const auto planned_summary = experiments::run_experiment(plan_request);
  result.exit_code = planned_summary.exit_code;
  result.planned = planned_summary.planned;
  result.message = planned_summary.message;
  if (planned_summary.run_dir.empty() || planned_summary.exit_code != experiments::kExitOk) return false;
  result.run_dir = std::filesystem::absolute(planned_summary.run_dir).lexically_normal();
  if (planned_summary.already_complete) {
    result.finished = planned_summary.results + planned_summary.invalid + planned_summary.failures;
    result.message = planned_summary.message + "; nothing to submit";
    return false;
  }
  return true;
}

// Queued or running tasks that still hold a unit without a terminal record ("job J tasks 0-3; ..."),
// or "" when there are none.
std::string live_tasks(const Reconciled& rec, const std::set<std::string>& done) {
  std::map<std::string, std::vector<std::string>> live;
  for (const auto& job : rec.jobs) {
    for (const auto& t : job.tasks) {
      const TaskState* state = task_state(job, t.index, rec.states);
      const bool holds_pending =
          std::any_of(t.units.begin(), t.units.end(), [&](const std::string& u) { return !done.count(u); });
      if (state && classify(*state) == TaskEnd::Active && holds_pending) {
        live[job.job_id].push_back(std::to_string(t.index));
      }
    }
  }
  std::string which;
  for (const auto& [job, tasks] : live) {
    which += (which.empty() ? "" : "; ") + std::string("job ") + job + " tasks " +
             array_ranges([&] {
               std::vector<std::size_t> v;
               for (const auto& t : tasks) v.push_back(std::stoul(t));
               return v;
             }());
  }
  return which;
}

// Whether this submission must stop before writing a script (`result` then says why): the window rule
// stopped the run, earlier tasks still hold units, or a task ended with an error that needs a person.
bool refuse_submission(const Reconciled& rec, const std::vector<nlohmann::json>& records,
                       const std::set<std::string>& done, const SlurmSubmitOptions& options, SubmitResult& result) {
  const std::string dir = result.run_dir.string();
  if (!rec.window_stop.empty()) {
    result.exit_code = experiments::kExitWindowStopped;
    result.message = dir + " was stopped by its window rule: " + rec.window_stop + "; nothing submitted";
    return true;
  }
  const std::string live = live_tasks(rec, done);
  if (!live.empty()) {
    result.exit_code = experiments::kExitError;
    result.message = "nothing submitted: earlier tasks of " + dir + " are still queued or running (" + live +
                     "). Wait until they end (`k3lab status " + dir + "`) or cancel them (scancel <job>), then "
                     "submit again";
    return true;
  }
  const auto blocks = needs_person_blocks(records, rec.jobs);
  if (!blocks.empty() && !options.resubmit_errors) {
    result.exit_code = experiments::kExitError;
    result.message = "nothing submitted: " + std::to_string(blocks.size()) +
                     " earlier task(s) ended with an error that the same command repeats (first: " + blocks.front() +
                     "). Fix the cause, then submit again with --resubmit-errors";
    return true;
  }
  return false;
}

// The units of the frozen plan still to run (restricted to --unit when given), with plan positions.
struct PendingUnits {
  std::map<std::string, std::size_t> position;  // every unit of the plan
  std::vector<std::string> units;
  std::size_t finished = 0;  // units of the plan with a terminal record
};

PendingUnits pending_units(const PlannedRun& run, const std::vector<std::string>& only_units,
                           const std::set<std::string>& done) {
  PendingUnits pending;
  for (std::size_t i = 0; i < run.plan.size(); ++i) pending.position.emplace(run.plan[i], i);
  for (const auto& wanted : only_units) {
    if (!pending.position.count(wanted)) {
      throw std::invalid_argument("--unit " + wanted + " is not a unit of this run (`k3lab plan " +
                                  run.manifest.value("experiment", "") + " --units` lists them)");
    }
  }
  const std::set<std::string> only(only_units.begin(), only_units.end());
  for (const auto& unit : run.plan) {
    if (done.count(unit)) ++pending.finished;
    else if (only.empty() || only.count(unit)) pending.units.push_back(unit);
  }
  return pending;
}

// Fills spec.tasks: one task per unit at its plan position, or the units dealt over --shard N tasks by
// plan position. Returns the most units one task runs.
std::size_t lay_out_tasks(SbatchScriptSpec& spec, const PendingUnits& pending, const SlurmSubmitOptions& options,
                          const CommandRunner& runner) {
  std::size_t max_units_per_task = 1;
  if (options.shard_count) {
    spec.layout = TaskLayout::Shards;
    spec.shard_count = *options.shard_count;
    std::map<std::size_t, std::vector<std::string>> shards;
    for (const auto& unit : pending.units) shards[pending.position.at(unit) % spec.shard_count].push_back(unit);
    for (auto& [index, units] : shards) {
      max_units_per_task = std::max(max_units_per_task, units.size());
      spec.tasks.push_back({index, std::move(units)});
    }
  } else {
    spec.layout = TaskLayout::PerUnit;
    for (const auto& unit : pending.units) spec.tasks.push_back({pending.position.at(unit), {unit}});
    const std::size_t highest = spec.tasks.back().index;
    const std::size_t limit = max_array_size(runner);
    if (highest >= limit) {
      throw std::invalid_argument("unit " + std::to_string(highest) + " of the plan needs array index " +
                                  std::to_string(highest) + ", above this cluster's MaxArraySize " +
                                  std::to_string(limit) + ": submit shards instead, e.g. --shard " +
                                  std::to_string(std::min<std::size_t>(limit - 1, 256)));
    }
  }
  return max_units_per_task;
}

// The script's #SBATCH options: k3lab's defaults and resources for the run, overridden by the user's.
std::vector<SbatchOption> script_options(SbatchScriptSpec& spec, const PlannedRun& run,
                                         const experiments::RunRequest& request, const SlurmSubmitOptions& submit,
                                         std::size_t max_units_per_task, const std::vector<SbatchOption>& user_options) {
  ResourceInputs inputs;
  inputs.evidence_class = run.manifest.value("evidence_class", "");
  inputs.profile = spec.profile;
  inputs.device = request.options.value("device", std::string("auto"));
  inputs.threads = request.options.value("threads", 0);
  auto details = run.experiment->plan_details(*run.protocol, run.parameters, run.units);
  if (submit.refine_plan_details) submit.refine_plan_details(details);
  inputs.gpu_hours_per_unit = gpu_hours_per_unit(details, run.units.size());
  inputs.gpu_hours_basis = gpu_hours_basis(details);
  inputs.cpu_hours_per_unit = cpu_hours_per_unit(details, run.units.size());
  inputs.safety_timeout_hours = safety_timeout_hours(run.parameters);
  inputs.max_units_per_task = max_units_per_task;
  inputs.ranks_per_task = ranks_per_task(user_options);
  std::vector<SbatchOption> defaults = {{"job-name", "k3lab-" + spec.experiment_id},
                                        {"output", (spec.run_dir / "slurm" / "%A_%a.out").string()},
                                        {"open-mode", "append"},
                                        {"chdir", spec.workdir.string()}};
  for (auto& o : default_resources(inputs)) defaults.push_back(std::move(o));
  const bool time_given = std::any_of(user_options.begin(), user_options.end(),
                                      [](const SbatchOption& o) { return o.name == "time"; });
  spec.resource_notes.push_back("time: " + (time_given ? std::string("given with --slurm-opt")
                                                       : task_time_limit(inputs).basis));
  spec.resource_notes.push_back(std::string("GPU: ") +
                                (needs_gpu(inputs) ? (inputs.ranks_per_task > 1 ? "one per rank (gpus-per-task=1)"
                                                                                : "one per task (gres=gpu:1)")
                                                   : "none (CPU units, or --device cpu)"));
  return merge_options(defaults, user_options);
}

SbatchScriptSpec script_spec(const experiments::RunRequest& request, const SlurmSubmitOptions& options,
                             const PlannedRun& run, const std::filesystem::path& run_dir,
                             const std::vector<std::string>& run_arguments) {
  SbatchScriptSpec spec;
  spec.experiment_id = run.manifest.value("experiment", request.experiment_id);
  spec.profile = run.manifest.value("profile", request.profile);
  spec.run_dir = run_dir;
  spec.k3lab_binary = std::filesystem::absolute(options.k3lab_binary.empty() ? this_executable() : options.k3lab_binary);
  spec.workdir = std::filesystem::current_path();
  spec.protocol_dir = std::filesystem::absolute(
      request.protocol_file ? request.protocol_file->parent_path() : core::protocol_dir()).lexically_normal();
  spec.run_arguments = run_arguments;
  spec.requeue = options.requeue;
  return spec;
}

void check_ranks_per_task(const SbatchScriptSpec& spec, const PlannedRun& run) {
  if (spec.ranks_per_task > 1 && !run.experiment->supports_data_parallel()) {
    throw std::invalid_argument(spec.experiment_id + " runs one process per unit, but the Slurm options ask for " +
                                std::to_string(spec.ranks_per_task) +
                                " tasks per array task (ntasks / ntasks-per-node): drop them, or use --shard to "
                                "spread short units over more array tasks");
  }
}

// Hands the script to sbatch and sets result.job_id and result.script_path (the script renamed after
// its job once sbatch has read it).
void run_sbatch(SubmitResult& result, const CommandRunner& runner) {
  const auto staged = result.run_dir / "slurm" / "submit.sh";
  core::write_file_atomically(staged, result.script);
  const std::vector<std::string> sbatch = {"sbatch", "--parsable", staged.string()};
  const auto submitted = runner(sbatch);
  if (submitted.not_found) {
    throw std::runtime_error("sbatch is not installed here: submit from a Slurm login node (the script is at " +
                             staged.string() + "; --dry-run prints it)");
  }
  std::string job_id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  if (submitted.exit_code != 0 || job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos) {
    std::string said = submitted.err + submitted.out;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    throw std::runtime_error("`" + command_line(sbatch) + "` failed (exit " + std::to_string(submitted.exit_code) +
                             "): " + said + "; nothing was submitted (is SLURM_CONF set, or is this a login node?)");
  }
  result.job_id = job_id;
  result.script_path = result.run_dir / "slurm" / ("job-" + job_id + ".sh");
  std::filesystem::rename(staged, result.script_path);  // sbatch has read it: the name records the job
}

void record_submitted_job(const SubmitResult& result, const SbatchScriptSpec& spec,
                          const experiments::RunRequest& request) {
  const std::string& job_id = result.job_id;
  JobRecord record;
  record.job_id = job_id;
  record.job_name = option_value(spec.options, "job-name");
  record.submitted = core::utc_now_iso();
  record.layout = spec.layout;
  record.shard_count = spec.shard_count;
  record.tasks = spec.tasks;
  record.script = std::filesystem::relative(result.script_path, result.run_dir).string();
  record.output = option_value(spec.options, "output");
  record.requeue = spec.requeue;
  record.command = request.argv;
  try {
    append_job_record(result.run_dir, record);
  } catch (const std::exception& e) {
    throw std::runtime_error("job " + job_id + " was submitted but could not be recorded (" + e.what() +
                             "): `k3lab status` will not follow it; cancel it (scancel " + job_id +
                             ") and submit again once the run dir is writable");
  }
}

}  // namespace

SubmitResult submit_to_slurm(const experiments::RunRequest& request, const SlurmSubmitOptions& options) {
  check_submit_request(request, options);
  const CommandRunner runner = options.runner ? options.runner : CommandRunner(run_command);
  const auto run_arguments = task_run_arguments(request);
  const auto user_options = parse_slurm_options(options.slurm_options);

  SubmitResult result;
  if (!plan_for_submission(request, ranks_per_task(user_options), result)) return result;
  check_slurm_path(result.run_dir, "run dir");

  RunDirLock lock(result.run_dir);
  if (!lock.held()) {
    throw std::runtime_error("cannot lock " + (result.run_dir / "slurm" / "submit.lock").string() +
                             ": another k3lab is submitting or recording Slurm failures for this run dir (wait for "
                             "it, then submit again), or the run dir is not writable");
  }
  const auto run = load_planned_run(result.run_dir, core::read_ledger(result.run_dir), request.experiment_factory);
  if (!run.experiment) throw std::runtime_error("cannot load the run's experiment: " + run.load_error);
  auto rec = reconcile(result.run_dir, run, runner, !options.dry_run);
  result.failures_recorded = rec.recorded;
  auto records = rec.ledger.records;
  if (options.dry_run) {
    records.insert(records.end(), rec.owed.begin(), rec.owed.end());
    records.insert(records.end(), rec.notes_owed.begin(), rec.notes_owed.end());
  }
  const auto done = terminal_units(records);
  if (refuse_submission(rec, records, done, options, result)) return result;

  PendingUnits pending = pending_units(run, request.only_units, done);
  result.finished = pending.finished;
  std::erase_if(pending.units, [&](const std::string& unit) {
    const auto lease = rec.leases.find(unit);
    if (lease == rec.leases.end() || lease->second.state != core::LeaseState::Live) return false;
    result.skipped_leased.push_back(unit + " (" + lease->second.describe() + ")");
    return true;
  });
  const std::string skipped =
      result.skipped_leased.empty()
          ? ""
          : "; " + std::to_string(result.skipped_leased.size()) +
                " unit(s) not submitted because a live lease covers them (first: " + result.skipped_leased.front() +
                "): their process still runs them, whatever Slurm says; once it ends or its lease expires, submit "
                "again";
  if (pending.units.empty()) {
    result.message = result.run_dir.string() + ": nothing to submit; " + std::to_string(result.finished) + " of " +
                     std::to_string(run.plan.size()) + " units have a terminal record" +
                     (request.only_units.empty() ? "" : " (and the named units are among them)") + skipped;
    return result;
  }

  SbatchScriptSpec spec = script_spec(request, options, run, result.run_dir, run_arguments);
  const std::size_t max_units_per_task = lay_out_tasks(spec, pending, options, runner);
  for (const auto& t : spec.tasks) result.submitted_units += t.units.size();
  result.tasks = spec.tasks.size();
  spec.options = script_options(spec, run, request, options, max_units_per_task, user_options);
  spec.ranks_per_task = ranks_per_task(spec.options);
  check_ranks_per_task(spec, run);
  result.script = render_sbatch_script(spec);

  if (options.dry_run) {
    result.message = "dry run: " + std::to_string(result.tasks) + " array tasks over " +
                     std::to_string(result.submitted_units) + " pending units of " + result.run_dir.string() +
                     "; nothing submitted" + skipped;
    return result;
  }

  run_sbatch(result, runner);
  record_submitted_job(result, spec, request);
  result.message = "submitted job " + result.job_id + ": " + std::to_string(result.tasks) + " array tasks over " +
                   std::to_string(result.submitted_units) + " pending units (" + std::to_string(result.finished) +
                   " of " + std::to_string(run.plan.size()) + " already have a terminal record) into " +
                   result.run_dir.string() + "; `k3lab status " + result.run_dir.string() + "` follows it" + skipped;
  return result;
}

StatusResult run_dir_status(const std::filesystem::path& run_dir, const StatusOptions& options) {
  const CommandRunner runner = options.runner ? options.runner : CommandRunner(run_command);
  StatusResult result;
  // Only a run dir with Slurm submissions can owe failure records (and needs the lock).
  std::optional<RunDirLock> lock;
  if (std::filesystem::exists(job_records_path(run_dir))) lock.emplace(run_dir);
  const bool locked = lock && lock->held();
  const std::string id = core::read_manifest(run_dir).value("experiment", "");
  const auto run = load_planned_run(run_dir, core::read_ledger(run_dir),
                                    [&] { return options.catalog.make(id); });
  result.manifest = run.manifest;
  result.planned = run.plan.size();
  const bool write = options.record_failures && locked;
  auto rec = reconcile(run_dir, run, runner, write);
  result.failures_recorded = rec.recorded;
  result.jobs = rec.jobs;
  result.window_stop = rec.window_stop;
  auto records = rec.ledger.records;
  if (!write) records.insert(records.end(), rec.notes_owed.begin(), rec.notes_owed.end());
  result.status = compute_status(run.plan, records, rec.jobs, rec.states, rec.leases);
  for (const auto& n : rec.notes) result.status.notes.push_back(n);
  if (options.record_failures && !locked && !rec.owed.empty()) {
    result.status.notes.push_back(std::to_string(rec.owed.size()) +
                                  " Slurm failures are owed but were not recorded now (another k3lab holds the run "
                                  "dir's submit lock, or it is not writable); the next status or submission records "
                                  "them");
  }
  if (rec.ledger.torn_lines > 0) {
    result.status.notes.push_back(std::to_string(rec.ledger.torn_lines) +
                                  " ledger shards end in an incomplete line (a writer is active, or died mid-line: "
                                  "its next open cuts and notes it)");
  }
  return result;
}

}  // namespace k3lab::exec
