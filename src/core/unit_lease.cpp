#include "k3lab/core/unit_lease.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {
namespace {

constexpr JsonLimits kLeaseJsonLimits{16, 1 << 20};

std::string first_line_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); "" when unreadable.
std::string process_start_time(std::int64_t pid) {
  const std::string stat = first_line_of("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');  // the command name may hold blanks and parentheses
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

std::string random_token() {
  std::random_device device;
  std::ostringstream out;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(device()));
    out << part;
  }
  return out.str();
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

double system_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso_of(double seconds) {
  return format_utc_seconds(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds))));
}

}  // namespace

nlohmann::json LeaseHolder::to_json() const {
  return {{"worker", worker},   {"pid", pid},         {"pid_start", pid_start},   {"host", host},
          {"boot_id", boot_id}, {"slurm_job", slurm_job}, {"slurm_step", slurm_step}, {"token", token}};
}

LeaseHolder LeaseHolder::from_json(const nlohmann::json& j) {
  LeaseHolder h;
  h.worker = j.value("worker", "");
  h.pid = j.value("pid", std::int64_t{0});
  h.pid_start = j.value("pid_start", "");
  h.host = j.value("host", "");
  h.boot_id = j.value("boot_id", "");
  h.slurm_job = j.value("slurm_job", "");
  h.slurm_step = j.value("slurm_step", "");
  h.token = j.at("token").get<std::string>();
  return h;
}

std::string LeaseHolder::describe() const {
  std::string text = (worker.empty() ? std::string("ledger.jsonl writer") : "worker " + worker) + ", pid " +
                     std::to_string(pid) + " on " + (host.empty() ? "?" : host);
  if (!slurm_job.empty()) text += " (slurm " + slurm_job + (slurm_step.empty() ? "" : "." + slurm_step) + ")";
  return text;
}

LeaseHolder this_process_holder(const std::string& worker) {
  LeaseHolder h;
  h.worker = worker;
  h.pid = ::getpid();
  h.pid_start = process_start_time(h.pid);
  h.host = host_name();
  h.boot_id = first_line_of("/proc/sys/kernel/random/boot_id");
  const std::string array_job = env_or_empty("SLURM_ARRAY_JOB_ID");
  h.slurm_job = array_job.empty() ? env_or_empty("SLURM_JOB_ID") : array_job + "_" + env_or_empty("SLURM_ARRAY_TASK_ID");
  h.slurm_step = env_or_empty("SLURM_STEP_ID");
  h.token = random_token();
  return h;
}

nlohmann::json Lease::to_json() const {
  return {{"unit", unit},           {"holder", holder.to_json()}, {"done", done},
          {"claimed_at", claimed_at}, {"renewed_at", renewed_at},   {"expires_at", expires_at},
          {"expires", iso_of(expires_at)}};
}

Lease Lease::from_json(const nlohmann::json& j) {
  Lease l;
  l.unit = j.at("unit").get<std::string>();
  l.holder = LeaseHolder::from_json(j.at("holder"));
  l.done = j.value("done", false);
  l.claimed_at = j.value("claimed_at", 0.0);
  l.renewed_at = j.value("renewed_at", 0.0);
  l.expires_at = j.at("expires_at").get<double>();
  return l;
}

LeaseSettings lease_settings_from_environment() {
  LeaseSettings settings;
  const std::string text = env_or_empty("K3LAB_LEASE_SECONDS");
  if (text.empty()) return settings;
  char* end = nullptr;
  const double period = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(period >= 1) || period > 7 * 24 * 3600) {
    throw std::invalid_argument("K3LAB_LEASE_SECONDS=" + text +
                                " must be a number of seconds from 1 to 604800 (the unit lease period); unset it "
                                "for the default of 600");
  }
  settings.period_seconds = period;
  settings.renew_seconds = period / 10;
  return settings;
}

Liveness process_liveness(const LeaseHolder& holder) {
  if (holder.host.empty() || holder.host == "unknown" || holder.host != host_name()) return Liveness::Unknown;
  if (!holder.boot_id.empty() && holder.boot_id != first_line_of("/proc/sys/kernel/random/boot_id")) {
    return Liveness::Dead;  // the host rebooted since: every process of that boot is gone
  }
  if (holder.pid <= 0) return Liveness::Unknown;
  if (::kill(static_cast<pid_t>(holder.pid), 0) != 0 && errno == ESRCH) return Liveness::Dead;
  if (!holder.pid_start.empty()) {
    const std::string start = process_start_time(holder.pid);
    if (!start.empty() && start != holder.pid_start) return Liveness::Dead;  // the pid was reused
  }
  return Liveness::Alive;
}

std::string to_string(LeaseState state) {
  switch (state) {
    case LeaseState::Free: return "free";
    case LeaseState::Live: return "live";
    case LeaseState::Stale: return "stale";
    case LeaseState::Done: return "done";
    case LeaseState::Mine: return "mine";
  }
  return "free";
}

std::string LeaseView::describe() const {
  if (!lease) return "no lease";
  return "leased by " + lease->holder.describe() + (lease->done ? ", done" : ", expires " + iso_of(lease->expires_at));
}

// The flock on leases/.lock: every claim, renewal, finish and release holds it briefly.
class LeaseTable::Lock {
 public:
  explicit Lock(const std::filesystem::path& folder) {
    std::error_code error;
    if (std::filesystem::create_directories(folder, error)) fsync_directory(folder.parent_path());
    const auto path = folder / ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno) +
                               "; the run dir must be writable by every process that runs its units");
    }
    int result;
    do {
      result = ::flock(fd_, LOCK_EX);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(err) +
                               "; the run dir must be on a file system with flock (a local disk or NFSv4)");
    }
  }
  ~Lock() { ::close(fd_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  int fd_ = -1;
};

LeaseTable::LeaseTable(std::filesystem::path run_dir, LeaseSettings settings)
    : run_dir_(std::move(run_dir)), folder_(run_dir_ / "leases"), settings_(std::move(settings)) {
  if (!settings_.clock) settings_.clock = system_seconds;
  if (!settings_.liveness) settings_.liveness = process_liveness;
  if (!(settings_.renew_seconds > 0) || settings_.renew_seconds * 2 > settings_.period_seconds) {
    throw std::invalid_argument("lease renewal every " + std::to_string(settings_.renew_seconds) +
                                " s must be positive and at most half the lease period (" +
                                std::to_string(settings_.period_seconds) + " s)");
  }
}

double LeaseTable::now() const { return settings_.clock(); }

std::filesystem::path LeaseTable::file_of(const std::string& unit) const {
  return folder_ / (sha256_hex(unit).substr(0, 16) + ".json");
}

LeaseView LeaseTable::view_locked(const std::string& unit, const std::string& asker) const {
  LeaseView view;
  const auto file = file_of(unit);
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return view;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  // Leases are not fsynced (write()): a power loss may leave an empty file, whose holder died with it.
  if (text.str().find_first_not_of(" \t\r\n") == std::string::npos) return view;
  Lease lease;
  try {
    lease = Lease::from_json(parse_json_bounded(text.str(), file.string(), kLeaseJsonLimits));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + " is not a unit lease (" + e.what() +
                             "): something other than k3lab wrote it. If no process runs unit " + unit +
                             ", delete the file and run again");
  }
  if (lease.unit != unit) {
    throw std::runtime_error(file.string() + " holds the lease of unit " + lease.unit + ", not of " + unit +
                             " (a hash collision or a copied file): delete it if no process runs either unit");
  }
  view.lease = lease;
  if (lease.done) {
    view.state = LeaseState::Done;
  } else if (!asker.empty() && lease.holder.token == asker) {
    view.state = LeaseState::Mine;
  } else {
    const Liveness alive = settings_.liveness(lease.holder);
    if (alive == Liveness::Alive) view.state = LeaseState::Live;
    else if (alive == Liveness::Dead) view.state = LeaseState::Stale;
    else view.state = now() < lease.expires_at ? LeaseState::Live : LeaseState::Stale;
  }
  return view;
}

LeaseView LeaseTable::view(const std::string& unit, const std::string& asker) const { return view_locked(unit, asker); }

std::vector<Lease> LeaseTable::all() const {
  std::vector<Lease> leases;
  std::error_code error;
  if (!std::filesystem::is_directory(folder_, error)) return leases;
  for (const auto& entry : std::filesystem::directory_iterator(folder_)) {
    if (entry.path().extension() != ".json") continue;
    try {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      leases.push_back(Lease::from_json(parse_json_bounded(text.str(), entry.path().string(), kLeaseJsonLimits)));
    } catch (const std::exception&) {
      // A file being renamed into place or damaged: claims report the damage where it matters.
    }
  }
  return leases;
}

// Not fsynced: a lease means something only while its holder lives, and a power loss ends every holder
// on the machine. What must survive (the unit's terminal record) is in the ledger, which is.
void LeaseTable::write(const Lease& lease) const {
  write_file_atomically(file_of(lease.unit), lease.to_json().dump(), Durability::AtomicOnly);
}

ClaimResult LeaseTable::claim(const std::string& unit, const LeaseHolder& holder) {
  const Lock lock(folder_);
  const LeaseView found = view_locked(unit, holder.token);
  ClaimResult result;
  result.previous = found.lease;
  switch (found.state) {
    case LeaseState::Done: result.outcome = ClaimOutcome::Finished; return result;
    case LeaseState::Live: result.outcome = ClaimOutcome::HeldByOther; return result;
    case LeaseState::Stale:
      result.outcome = ClaimOutcome::TakenOver;
      result.why = settings_.liveness(found.lease->holder) == Liveness::Dead
                       ? "its process is gone (pid " + std::to_string(found.lease->holder.pid) + " on " +
                             found.lease->holder.host + ")"
                       : "it expired at " + iso_of(found.lease->expires_at) + " without renewal";
      break;
    case LeaseState::Free:
    case LeaseState::Mine: result.outcome = ClaimOutcome::Claimed; break;
  }
  Lease lease;
  lease.unit = unit;
  lease.holder = holder;
  lease.claimed_at = lease.renewed_at = now();
  lease.expires_at = lease.claimed_at + settings_.period_seconds;
  write(lease);
  return result;
}

bool LeaseTable::renew(const std::string& unit, const std::string& token) {
  const Lock lock(folder_);
  const LeaseView found = view_locked(unit, token);
  if (found.state != LeaseState::Mine) return false;
  Lease lease = *found.lease;
  lease.renewed_at = now();
  lease.expires_at = lease.renewed_at + settings_.period_seconds;
  write(lease);
  return true;
}

bool LeaseTable::finish(const std::string& unit, const std::string& token, const std::function<void()>& append_terminal) {
  const Lock lock(folder_);
  const LeaseView found = view_locked(unit, token);
  if (found.state != LeaseState::Mine) return false;
  append_terminal();
  Lease lease = *found.lease;
  lease.done = true;
  write(lease);
  return true;
}

bool LeaseTable::finish_unheld(const std::string& unit, const std::function<void()>& append_terminal) {
  const Lock lock(folder_);
  const LeaseView found = view_locked(unit, "");
  if (found.state == LeaseState::Live || found.state == LeaseState::Done) return false;
  append_terminal();
  Lease lease;
  lease.unit = unit;
  lease.holder = this_process_holder("");
  lease.done = true;
  lease.claimed_at = lease.renewed_at = lease.expires_at = now();
  write(lease);
  return true;
}

void LeaseTable::release(const std::string& unit, const std::string& token) {
  const Lock lock(folder_);
  const LeaseView found = view_locked(unit, token);
  if (found.state != LeaseState::Mine) return;
  std::filesystem::remove(file_of(unit));
}

}  // namespace k3lab::core
