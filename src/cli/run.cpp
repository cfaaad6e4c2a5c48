#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/bench_pricing.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/endpoint_preflight.hpp"
#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/transport_options.hpp"
#include "k3lab/core/progress.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/exec/slurm_executor.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/experiments/registry.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/train/peer_group_factory.hpp"

namespace k3lab::cli {
namespace {

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      const auto index = std::stoul(text.substr(0, slash));
      const auto count = std::stoul(text.substr(slash + 1));
      if (count > 0 && index < count) return {index, count};
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--shard expects i/n with 0 <= i < n (e.g. --shard 3/16), got \"" + text + "\"");
}

// --executor slurm --shard N: the number of array tasks.
std::size_t parse_shard_count(const std::string& text) {
  try {
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && std::stoul(text) > 0) {
      return std::stoul(text);
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--executor slurm takes --shard N, the number of array tasks (e.g. --shard 16), got \"" +
                              text + "\"");
}

struct RunOptions {
  std::vector<std::string> ids;
  bool all = false;
  std::string profile = "smoke";
  std::string out = "runs";
  std::vector<std::string> set;
  bool unfrozen = false;
  bool fresh = false;
  std::string run_dir;
  std::string worker;
  std::vector<std::string> units;
  std::string shard;
  std::string base_url;
  bool base_url_given = false;
  std::string served_model;
  bool served_model_given = false;
  bool no_preflight = false;
  double connect_timeout_s = 0, stall_timeout_s = 0, call_timeout_s = 0;  // 0: the protocol's transport
  double requests_per_minute = 0, tokens_per_minute = 0;                  // 0: the protocol's transport
  int threads = 0;
  std::string device = "auto";
  std::string data_dir;
  std::string executor = "local";
  std::vector<std::string> slurm_opts;
  bool dry_run = false;
  bool requeue = false;
  bool no_requeue = false;
  bool resubmit_errors = false;
};

void add_run_options(CLI::App* cmd, RunOptions& opt) {
  cmd->add_option("experiments", opt.ids, "Experiment ids (see `k3lab list`)");
  cmd->add_flag("--all", opt.all, "Run every experiment whose runner is built");
  cmd->add_option("--profile", opt.profile, "full (the seed exactly) or smoke (toy sizes, same code path); smoke by default, as for `plan`")
      ->check(CLI::IsMember({"full", "smoke"}))
      ->capture_default_str();
  cmd->add_option("--out", opt.out, "Runs root; run dirs go to <out>/<id>/<time>-<shortid>/")->capture_default_str();
  cmd->add_option("--set", opt.set, "Override a parameter, key=value (needs --unfrozen)");
  cmd->add_flag("--unfrozen", opt.unfrozen, "Allow an unfrozen or overridden protocol; every record says NOT FROZEN");
  cmd->add_flag("--fresh", opt.fresh, "Start a new run dir instead of resuming the latest one");
  cmd->add_option("--run-dir", opt.run_dir, "Resume or extend this run dir (shared storage for array tasks)");
  cmd->add_option("--worker", opt.worker, "Write ledger shard ledger.<worker>.jsonl (one per concurrent worker)");
  cmd->add_option("--unit", opt.units, "Run only these unit ids");
  cmd->add_option("--shard", opt.shard, "Run only units with index % n == i, as i/n");
  cmd->add_option("--base-url", opt.base_url,
                  "API experiments: OpenAI-compatible endpoint (default $K3LAB_BASE_URL, else the Kimi API when "
                  "MOONSHOT_API_KEY is set, else the embedded mock server); the run is bound to it");
  cmd->add_option("--served-model", opt.served_model,
                  "API experiments: the name the server serves the protocol's model under (vLLM/SGLang "
                  "--served-model-name), sent as the request's model; recorded, shown on every page");
  cmd->add_flag("--no-preflight", opt.no_preflight,
                "API experiments: start a new run on a real endpoint without the pre-flight (`k3lab check-endpoint`)");
  // The protocol's transport section sets these; an override is recorded and shown as a deviation on
  // every page, without --unfrozen (api/transport_options.hpp).
  cmd->add_option("--connect-timeout", opt.connect_timeout_s,
                  "API experiments: connect timeout per send, s (overrides the protocol's transport.connect_timeout_s; "
                  "recorded, shown as a deviation)");
  cmd->add_option("--stall-timeout", opt.stall_timeout_s,
                  "API experiments: a send with no payload byte (keep-alive comments do not count) for this long fails "
                  "as a transport error, s (overrides transport.stall_timeout_s; recorded, shown as a deviation)");
  cmd->add_option("--call-timeout", opt.call_timeout_s,
                  "API experiments: total time one send may take, s (overrides transport.call_timeout_s; recorded, "
                  "shown as a deviation)");
  cmd->add_option("--requests-per-minute", opt.requests_per_minute,
                  "API experiments: client-side request rate limit, to keep 429s rare (overrides "
                  "transport.requests_per_minute; recorded, shown as a deviation)");
  cmd->add_option("--tokens-per-minute", opt.tokens_per_minute,
                  "API experiments: client-side token rate limit, prompt estimate + output cap per send (overrides "
                  "transport.tokens_per_minute; recorded, shown as a deviation)");
  cmd->add_option("--threads", opt.threads,
                  "Cores a training unit keeps busy: LibTorch's intra-op pool and the BLAS pool, or on the CPU a "
                  "step's micro-batches side by side, one per core (the same result); API calls run one at a time "
                  "(0: the cores the CPU affinity allows)")
      ->capture_default_str();
  cmd->add_option("--device", opt.device, "Training device: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--data-dir", opt.data_dir,
                  "Proxy experiments: root of the token-shard datasets (default $K3LAB_DATA_DIR, else ./data; "
                  "scripts/build-corpus.sh writes jargon-file there)");
  cmd->add_option("--executor", opt.executor,
                  "local (this process) or slurm (submit one sbatch job array over the pending units; docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  cmd->add_option("--slurm-opt", opt.slurm_opts,
                  "With --executor slurm: an sbatch option as name=value, e.g. --slurm-opt partition=gpu (repeatable)");
  cmd->add_flag("--dry-run", opt.dry_run, "With --executor slurm: plan the run dir and print the script; submit nothing");
  cmd->add_flag("--requeue", opt.requeue,
                "With --executor slurm: let Slurm requeue preempted tasks (the default; resume is safe)");
  cmd->add_flag("--no-requeue", opt.no_requeue, "With --executor slurm: ask Slurm not to requeue tasks");
  cmd->add_flag("--resubmit-errors", opt.resubmit_errors,
                "With --executor slurm: submit units whose earlier task ended with an error that needs a person "
                "(exit 2-4), once you have fixed its cause");
}

// The execution options every experiment's units receive.
nlohmann::json execution_options(const RunOptions& opt) {
  nlohmann::json options = nlohmann::json::object();
  if (opt.base_url_given) {
    api::check_base_url_text(opt.base_url);
    options["base_url"] = opt.base_url;
  }
  if (opt.served_model_given) {
    options["served_model"] = opt.served_model;
    api::served_model_option(options);  // a blank name is refused, not dropped
  }
  const std::tuple<const char*, const char*, double> transport[] = {
      {api::kConnectTimeoutOption, "--connect-timeout", opt.connect_timeout_s},
      {api::kStallTimeoutOption, "--stall-timeout", opt.stall_timeout_s},
      {api::kCallTimeoutOption, "--call-timeout", opt.call_timeout_s},
      {api::kRequestsPerMinuteOption, "--requests-per-minute", opt.requests_per_minute},
      {api::kTokensPerMinuteOption, "--tokens-per-minute", opt.tokens_per_minute}};
  for (const auto& [key, flag, value] : transport) {
    if (value < 0) throw std::invalid_argument(std::string(flag) + " must be positive");
    if (value > 0) options[key] = value;
  }
  if (opt.threads > 0) options["threads"] = opt.threads;
  options["device"] = opt.device;
  if (!opt.data_dir.empty()) options["data_dir"] = std::filesystem::absolute(opt.data_dir).string();
  return options;
}

// A new API run on a real endpoint: the pre-flight first; a failure refuses the run before anything
// is recorded, a pass is recorded in the manifest (options.preflight), outside the call ledger.
void preflight_new_run(const RunOptions& opt, const std::string& id, const api::EndpointChoice& choice,
                       nlohmann::json& options) {
  if (opt.no_preflight) {
    options["preflight"] = "skipped (--no-preflight)";
    return;
  }
  const auto report = preflight_endpoint(id, choice, options, opt.profile);
  if (!report.ok()) {
    throw std::invalid_argument(id + ": refusing to start a run on " + choice.description() +
                                ": the endpoint pre-flight failed (nothing was recorded):\n" + report.text() +
                                "Fix it (docs/endpoints.md), or pass --no-preflight to start anyway");
  }
  options["preflight"] = report.to_json();
}

// API experiments: the endpoint identity goes into the manifest, and the run dir this command would
// resume must have been started against the same endpoint (api/endpoint_binding.hpp).
nlohmann::json bind_endpoint(const RunOptions& opt, const std::string& id, nlohmann::json options) {
  if (!api::calls_chat_endpoint(id)) return options;
  const auto choice = api::choose_endpoint(options, id);
  const auto identity = api::identify_endpoint(choice, options);
  // A Slurm submission passes its options on to the array tasks as flags (task_run_arguments), which
  // record the identity themselves when they extend the run dir.
  if (opt.executor == "local") options["endpoint"] = identity.to_json();
  std::optional<core::RunDirInfo> run;
  if (!opt.run_dir.empty()) {
    if (std::filesystem::exists(std::filesystem::path(opt.run_dir) / "manifest.json")) {
      run = core::RunDirInfo{opt.run_dir, core::read_manifest(opt.run_dir)};
    }
  } else if (!opt.fresh) {
    run = core::latest_run_dir(opt.out, id, opt.profile);
  }
  if (run) {
    const auto recorded = run->manifest.value("options", nlohmann::json::object());
    if (const auto problem = api::endpoint_mismatch(run->path.string(), recorded, identity)) {
      throw std::invalid_argument(*problem);
    }
  } else if (!choice.embedded() && opt.executor == "local") {
    preflight_new_run(opt, id, choice, options);
  }
  return options;
}

experiments::RunRequest run_request(const RunOptions& opt, const std::string& id, const nlohmann::json& options,
                                    const Context& ctx) {
  experiments::RunRequest request;
  request.experiment_id = id;
  request.experiment_factory = [id] { return experiments::make_experiment(id); };
  request.peer_group_factory = train::make_peer_group;
  request.profile = opt.profile;
  request.runs_root = opt.out;
  request.unfrozen = opt.unfrozen;
  request.fresh = opt.fresh;
  request.set_overrides = opt.set;
  request.options = options;
  request.argv = ctx.argv;
  if (!opt.run_dir.empty()) request.run_dir = std::filesystem::path(opt.run_dir);
  request.worker = opt.worker;
  request.only_units = opt.units;
  return request;
}

// Submits one experiment's pending units as a Slurm job array; returns its exit code.
int submit_one(const RunOptions& opt, const std::string& id, const experiments::RunRequest& request) {
  exec::SlurmSubmitOptions slurm;
  slurm.slurm_options = opt.slurm_opts;
  if (!opt.shard.empty()) slurm.shard_count = parse_shard_count(opt.shard);
  slurm.dry_run = opt.dry_run;
  if (opt.requeue && opt.no_requeue) throw std::invalid_argument("--requeue and --no-requeue contradict each other");
  slurm.requeue = !opt.no_requeue;
  slurm.resubmit_errors = opt.resubmit_errors;
  const std::string device_kind = bench_device_kind(request.options.value("device", std::string("auto")));
  slurm.refine_plan_details = [device_kind](nlohmann::json& details) {
    price_arms_from_bench_records(details, {}, device_kind);
  };
  const auto submitted = exec::submit_to_slurm(request, slurm);
  if (opt.dry_run && !submitted.script.empty()) std::cout << submitted.script;
  std::cout << id << ": " << submitted.message << "\n";
  if (!submitted.job_id.empty()) std::cout << "job " << submitted.job_id << "\n";
  return submitted.exit_code;
}

// Runs one experiment in this process.
experiments::RunSummary run_one(const RunOptions& opt, const std::string& id, experiments::RunRequest request) {
  if (!opt.slurm_opts.empty() || opt.dry_run || opt.requeue || opt.no_requeue || opt.resubmit_errors) {
    throw std::invalid_argument("--slurm-opt, --dry-run, --requeue, --no-requeue and --resubmit-errors need "
                                "--executor slurm");
  }
  if (!opt.shard.empty()) request.shard = parse_shard(opt.shard);
  const auto summary = experiments::run_experiment(request);
  // A refusal or a stop is for stderr; a finished run's line for stdout.
  std::ostream& out = summary.exit_code == experiments::kExitOk ? std::cout : std::cerr;
  out << id << ": " << summary.message;
  if (!summary.run_dir.empty()) {
    out << " [results " << summary.results << ", invalid " << summary.invalid << ", failures " << summary.failures
        << " of " << summary.planned << "]";
  }
  out << "\n";
  return summary;
}

// What the end-of-run table says about a run's outcome, in a few words.
std::string outcome_words(const experiments::RunSummary& summary, const std::string& profile) {
  switch (summary.exit_code) {
    case experiments::kExitOk: break;
    case experiments::kExitWindowStopped: return "stopped by its window rule";
    case experiments::kExitInterrupted: return "interrupted: run again to resume";
    default: return "did not finish (exit " + std::to_string(summary.exit_code) + ")";
  }
  const std::size_t ended = summary.results + summary.invalid + summary.failures;
  if (ended < summary.planned) return "incomplete: run again to resume";
  return profile == "smoke" ? "complete (smoke: no verdict)" : "complete: verdict on its page";
}

// After `run`, one table of every experiment it ran (as lm-eval and llama-bench end), and where the
// pages come from.
void print_results_table(const std::vector<std::pair<std::string, experiments::RunSummary>>& ran,
                         const RunOptions& opt) {
  if (ran.empty()) return;
  report::Table table;
  table.columns = {"experiment", "profile", "units", "results", "invalid", "failures", "outcome", "run dir"};
  for (const auto& [id, summary] : ran) {
    const std::size_t ended = summary.results + summary.invalid + summary.failures;
    table.rows.push_back({report::Cell(id), report::Cell(opt.profile),
                          report::Cell(std::to_string(ended) + "/" + std::to_string(summary.planned)),
                          report::Cell(summary.results), report::Cell(summary.invalid), report::Cell(summary.failures),
                          report::Cell(outcome_words(summary, opt.profile)),
                          report::Cell(summary.run_dir.empty() ? std::string("-") : summary.run_dir.string())});
  }
  std::cout << "\n" << report::table_markdown(table) << "\nPages: build/k3lab report --runs " << opt.out
            << " --out report   (then open report/index.html)\n";
}

// Runs or submits every named experiment in turn; the first non-zero exit code is the command's.
void run_experiments(RunOptions& opt, Context& ctx) {
  if (opt.all) {
    opt.ids.clear();
    for (const auto& id : experiments::registry().ids) opt.ids.push_back(id);
  }
  if (opt.ids.empty()) throw std::invalid_argument("run: name an experiment id, or pass --all");
  const nlohmann::json options = execution_options(opt);
  const bool slurm = opt.executor == "slurm";
  std::vector<std::pair<std::string, experiments::RunSummary>> ran;
  int worst = 0;
  for (std::size_t i = 0; i < opt.ids.size(); ++i) {
    const std::string& id = opt.ids[i];
    core::set_progress_batch(i + 1, opt.ids.size());
    nlohmann::json bound;
    try {
      bound = bind_endpoint(opt, id, options);
    } catch (const api::CallInterrupted&) {
      std::cout << id << ": interrupted during the endpoint pre-flight; nothing was recorded\n";
      ctx.exit_code = experiments::kExitInterrupted;
      return;
    }
    const experiments::RunRequest request = run_request(opt, id, bound, ctx);
    int exit_code = 0;
    if (slurm) {
      exit_code = submit_one(opt, id, request);
    } else {
      ran.emplace_back(id, run_one(opt, id, request));
      exit_code = ran.back().second.exit_code;
    }
    if (exit_code != 0 && worst == 0) worst = exit_code;
    if (!slurm && exit_code == experiments::kExitInterrupted) break;
  }
  core::set_progress_batch(0, 0);
  print_results_table(ran, opt);
  ctx.exit_code = worst;
}

}  // namespace

void register_run(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("run", "Run (or resume) an experiment's frozen protocol into a run directory");
  auto opt = std::make_shared<RunOptions>();
  add_run_options(cmd, *opt);
  cmd->callback([opt, &ctx, cmd] {
    opt->base_url_given = cmd->count("--base-url") > 0;
    opt->served_model_given = cmd->count("--served-model") > 0;
    run_experiments(*opt, ctx);
  });
}

}  // namespace k3lab::cli
