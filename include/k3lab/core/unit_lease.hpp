#pragma once
// Unit leases: who may run a unit of a run dir right now (docs/reliability.md, "Unit claims and
// leases"; docs/slurm.md). One mechanism for two rules: two processes on one run dir never run the
// same unit (issue 12), and a Slurm task counts as gone only when its lease has expired (issue 20).
//
// A lease is a small JSON file, <run dir>/leases/<sha256(unit)[:16]>.json, written atomically (temp,
// rename; not fsynced: a power loss ends its holder too) under an flock on leases/.lock, carrying the holder (worker, pid and
// its start time, host and boot id, Slurm job/step, a random token) and an expiry. The holder renews
// it well before it expires; it is marked done in the same locked section that appends the unit's
// terminal record, so a process that lost its lease never writes one.
//
// Whether another holder is alive: on the same host (same boot) the pid and its start time decide at
// once; elsewhere only the expiry does. Clock and liveness are injected so that tests decide both.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct LeaseHolder {
  std::string worker;      // the ledger shard it writes ("" = ledger.jsonl)
  std::int64_t pid = 0;
  std::string pid_start;   // /proc/<pid>/stat start time: tells a reused pid apart
  std::string host;
  std::string boot_id;     // /proc/sys/kernel/random/boot_id: tells a rebooted host apart
  std::string slurm_job;   // "<array job>_<task>" or the job id; "" outside Slurm
  std::string slurm_step;
  std::string token;       // random per holder: identity, whatever the pid

  nlohmann::json to_json() const;
  static LeaseHolder from_json(const nlohmann::json& j);
  std::string describe() const;  // "worker w, pid 12 on node3 (slurm 41_2)"
};

// This process as a lease holder (host, boot id, pid and start time, SLURM_* variables, a new token).
LeaseHolder this_process_holder(const std::string& worker);

struct Lease {
  std::string unit;
  LeaseHolder holder;
  bool done = false;           // the unit's terminal record was appended under this lease
  double claimed_at = 0;       // seconds since the epoch
  double renewed_at = 0;
  double expires_at = 0;
  nlohmann::json to_json() const;
  static Lease from_json(const nlohmann::json& j);
};

enum class Liveness { Alive, Dead, Unknown };

struct LeaseSettings {
  double period_seconds = 600;  // a lease not renewed for this long has expired
  double renew_seconds = 60;    // how often a holder renews (well below the period)
  std::function<double()> clock;                          // seconds since the epoch (default: system clock)
  std::function<Liveness(const LeaseHolder&)> liveness;   // default: process_liveness
};

// K3LAB_LEASE_SECONDS (the period; renewal at a tenth of it) overrides the defaults; a bad value is
// an std::invalid_argument naming the variable.
LeaseSettings lease_settings_from_environment();

// Alive or Dead for a holder on this host and boot (pid exists with the same start time); Unknown for
// one on another host.
Liveness process_liveness(const LeaseHolder& holder);

// What a lease means to someone else who wants its unit.
enum class LeaseState {
  Free,     // no lease, or one released
  Live,     // another holder runs it: unexpired, or alive on this host
  Stale,    // expired and not known alive, or its process is dead: it may be taken over
  Done,     // the unit's terminal record was written under it
  Mine,     // held by the asker's token
};
std::string to_string(LeaseState state);

struct LeaseView {
  LeaseState state = LeaseState::Free;
  std::optional<Lease> lease;
  std::string describe() const;  // for messages: who holds it and until when
};

enum class ClaimOutcome { Claimed, TakenOver, HeldByOther, Finished };

struct ClaimResult {
  ClaimOutcome outcome = ClaimOutcome::Claimed;
  std::optional<Lease> previous;  // the lease found (the holder taken over, or the one that holds it)
  std::string why;                // TakenOver: why the old lease no longer counted
};

class LeaseTable {
 public:
  LeaseTable(std::filesystem::path run_dir, LeaseSettings settings);

  // The unit's lease as `asker` (a token, "" for a reader holding none) sees it; reads without the lock.
  LeaseView view(const std::string& unit, const std::string& asker = "") const;
  // Every lease file of the run dir (unreadable ones skipped), for status.
  std::vector<Lease> all() const;

  // Claims `unit` for `holder` unless a live lease covers it or it is done; a stale lease is taken over.
  ClaimResult claim(const std::string& unit, const LeaseHolder& holder);
  // Pushes the expiry out; false when the lease is no longer this token's (taken over or released).
  bool renew(const std::string& unit, const std::string& token);
  // Runs `append_terminal` and marks the lease done, both under the lock, only while `token` still
  // holds `unit`; false (nothing run) when the lease was lost.
  bool finish(const std::string& unit, const std::string& token, const std::function<void()>& append_terminal);
  // For a terminal record written without a lease of its own (Slurm accounting): runs `append_terminal`
  // and marks the unit done unless a live lease covers it or it is done already; false otherwise.
  bool finish_unheld(const std::string& unit, const std::function<void()>& append_terminal);
  // Gives the unit up without a terminal record (stopped, a fault): the next claim is immediate.
  void release(const std::string& unit, const std::string& token);

  const LeaseSettings& settings() const { return settings_; }
  std::filesystem::path file_of(const std::string& unit) const;

 private:
  class Lock;
  LeaseView view_locked(const std::string& unit, const std::string& asker) const;
  void write(const Lease& lease) const;
  double now() const;

  std::filesystem::path run_dir_;
  std::filesystem::path folder_;
  LeaseSettings settings_;
};

}  // namespace k3lab::core
