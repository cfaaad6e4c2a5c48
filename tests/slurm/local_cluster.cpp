#include "local_cluster.hpp"

#include <unistd.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::slurm_testing {
namespace {

using namespace std::chrono_literals;

const std::filesystem::path kScript = std::filesystem::path(K3LAB_SOURCE_DIR) / "scripts" / "slurm-local.sh";

bool on_path(const std::string& tool) {
  return exec::run_command({"sh", "-c", "command -v " + tool}).exit_code == 0;
}

}  // namespace

std::optional<std::string> cannot_start_cluster(bool needs_srun) {
  if (::geteuid() != 0) return "needs root to start munged, slurmctld and slurmd (scripts/slurm-local.sh)";
  std::vector<std::string> tools = {"munged", "munge", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo"};
  if (needs_srun) tools.push_back("srun");
  for (const auto& tool : tools) {
    if (!on_path(tool)) return tool + " is not installed: install Debian's slurm-wlm and munge (scripts/setup.sh)";
  }
  return std::nullopt;
}

LocalSlurm::LocalSlurm(std::map<std::string, std::string> env) : env_(std::move(env)) {
  const char* dir = std::getenv("K3LAB_SLURM_DIR");
  dir_ = dir ? dir : "/var/tmp/k3lab-slurm";
  const auto before = script("status");
  was_running_ = before.out.find("slurmctld: running") != std::string::npos &&
                 before.out.find("slurmd: running") != std::string::npos;
  const auto started = script("start");
  ok_ = started.exit_code == 0;
  log_ = started.out + started.err;
}

LocalSlurm::~LocalSlurm() {
  if (!was_running_) script("stop");
}

bool LocalSlurm::stop_slurmd() const {
  std::ifstream in(dir_ / "slurmd.pid");
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0 || ::kill(pid, SIGTERM) != 0) return false;
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(100ms);
  return ::kill(pid, 0) != 0;
}

bool LocalSlurm::start_again() const { return script("start").exit_code == 0; }

exec::CommandResult LocalSlurm::script(const std::string& command) const {
  std::vector<std::string> argv = {"env"};
  for (const auto& [k, v] : env_) argv.push_back(k + "=" + v);
  argv.insert(argv.end(), {kScript.string(), command});
  return exec::run_command(argv);
}

Workdir::Workdir() {
  std::filesystem::copy(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments", dir.path() / "experiments",
                        std::filesystem::copy_options::recursive);
  env["K3LAB_PROTOCOL_DIR"] = (dir.path() / "experiments").string();
}

exec::CommandResult Workdir::k3lab(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"env", "-C", dir.path().string()};
  for (const auto& [k, v] : env) argv.push_back(k + "=" + v);
  argv.push_back(K3LAB_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  return exec::run_command(argv);
}

exec::CommandResult Workdir::slurm(std::vector<std::string> argv) const {
  argv.insert(argv.begin(), {"env", "SLURM_CONF=" + env.at("SLURM_CONF")});
  return exec::run_command(argv);
}

exec::TaskStates Workdir::states(const std::string& job) const {
  exec::TaskStates s;
  const auto r = slurm({"scontrol", "-o", "show", "job", job});
  if (r.exit_code == 0) {
    for (const auto& t : exec::parse_scontrol(r.out)) s.tasks[{t.job_id, *t.task}] = t;
  }
  return s;
}

bool Workdir::wait_until_ended(const std::string& job, std::chrono::seconds limit) const {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto s = states(job);
    bool active = s.tasks.empty();
    for (const auto& [key, t] : s.tasks) active = active || exec::classify(t) == exec::TaskEnd::Active;
    if (!active) return true;
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

std::string job_id_of(const std::string& output) {
  const auto at = output.rfind("\njob ");
  if (at == std::string::npos) return "";
  const auto start = at + 5;
  return output.substr(start, output.find('\n', start) - start);
}

std::vector<nlohmann::json> terminal(const std::filesystem::path& run_dir) {
  experiments::RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  std::vector<nlohmann::json> out;
  for (const auto& r : records.terminal_records()) out.push_back(core::deterministic_part(r));
  return out;
}

std::size_t terminal_count(const std::filesystem::path& shard) {
  std::ifstream in(shard);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    try {
      n += core::is_terminal_kind(nlohmann::json::parse(line).value("kind", ""));
    } catch (const nlohmann::json::exception&) {
    }
  }
  return n;
}

pid_t k3lab_process_of(const std::string& worker) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(std::string("--worker") + '\0' + worker + '\0') != std::string::npos) return std::stoi(name);
  }
  return 0;
}

pid_t k3lab_rank_process(const std::string& worker, int rank) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path() / "exe", ec).filename() != "k3lab") continue;
    std::ifstream cmd(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (cmdline.find(std::string("--worker") + '\0' + worker + '\0') == std::string::npos) continue;
    std::ifstream env(entry.path() / "environ", std::ios::binary);
    const std::string environ((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    if (environ.find(std::string("\0SLURM_PROCID=", 14) + std::to_string(rank) + '\0') != std::string::npos) {
      return std::stoi(name);
    }
  }
  return 0;
}

}  // namespace k3lab::slurm_testing
