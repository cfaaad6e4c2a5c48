#pragma once
// The stages of run_experiment (runner.cpp), one concept per file; private to the spine.
//   design      run_design.cpp      protocol, freeze and --set checks -> the resolved design
//   peers       peer_ranks.cpp      ranks other than 0 of a data-parallel command, and rank 0's messages
//   run dir     run_dir_choice.cpp  resume, refuse, or create the run dir (under the experiment's lock)
//   units       unit_loop.cpp       attempts, terminal records, window rules, progress
//   claims      unit_claim.cpp      the leases of the units this command runs, renewed in the background
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/freeze.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/peer_group.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/unit_lease.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::experiments::stages {

// How long the other ranks of a data-parallel run wait for rank 0's work alone (choosing the run dir,
// a unit's final measurements and records). A dead rank 0 ends the wait at once (its store is gone).
inline constexpr std::chrono::hours kPeerWait{24};

RunSummary refusal(int code, std::string message);

// Counts results, invalid and failures among terminal records into `summary`.
void count_terminal(const std::vector<nlohmann::json>& terminal, RunSummary& summary);

// Everything fixed before a run dir is chosen: what is run, under which freeze, with which units.
struct Design {
  core::Protocol protocol;
  core::FreezeStatus freeze;
  bool frozen = true;
  nlohmann::json parameters;
  std::string hash;
  std::vector<Unit> units;
  std::vector<std::string> labels;
};

// The design, or the refusal to run it (protocol, freeze, --set, preflight).
std::variant<Design, RunSummary> resolve_design(Experiment& experiment, const RunRequest& request);

// The data-parallel group of this command (null for one process), or a refusal.
std::variant<std::unique_ptr<core::PeerGroup>, RunSummary> join_peer_group(const Experiment& experiment,
                                                                           const RunRequest& request,
                                                                           core::LaunchEnvironment& launch);

// Rank 0's word to the other ranks, sent once: the run dir and the units to train, or that there are
// none. The destructor sends "none" on every way out before the units (they wait for it).
class PeerPlan {
 public:
  explicit PeerPlan(core::PeerGroup* group) : group_(group) {}
  ~PeerPlan();
  PeerPlan(const PeerPlan&) = delete;
  PeerPlan& operator=(const PeerPlan&) = delete;
  void send(const nlohmann::json& plan);

 private:
  core::PeerGroup* group_;
  bool sent_ = false;
};

// Every rank leaves together: rank 0 serves the store, and a peer still reading its last message
// would take rank 0's exit for a death. Skipped once the group has broken.
class Farewell {
 public:
  explicit Farewell(core::PeerGroup* group) : group_(group) {}
  ~Farewell();
  Farewell(const Farewell&) = delete;
  Farewell& operator=(const Farewell&) = delete;

 private:
  core::PeerGroup* group_;
};

// A rank failure leaves the unit open (a rerun resumes it from its checkpoint) and is noted.
nlohmann::json rank_failure_note(const std::string& unit, const core::PeerGroup& group, const std::string& detail);

// Ranks other than 0: train the units rank 0 names, one at a time in step with it, and write nothing.
RunSummary run_as_peer(Experiment& experiment, const Design& design, const RunRequest& request, core::PeerGroup& group);

// The run dir to extend, or a summary that ends the command (complete, stopped, or a refusal). The
// experiment's RunChoiceLock stays held until the caller has opened its ledger writer and written the
// plan record, so a second command never sees a chosen run dir without its plan.
struct ChosenRunDir {
  core::RunDirInfo run;
  bool created = false;
  std::unique_ptr<core::RunChoiceLock> lock;
};
std::variant<ChosenRunDir, RunSummary> choose_run_dir(const Design& design, const RunRequest& request,
                                                      const nlohmann::json& data_parallel);

// Says loudly (log, message, exit 1) when a unit has more than one terminal record; never picks one.
void flag_duplicate_terminal(const core::LedgerContents& ledger, const std::filesystem::path& run_dir,
                             RunSummary& summary);

// Writes the frozen plan record unless the ledger holds one.
void write_plan_once(core::LedgerWriter& writer, const core::LedgerContents& ledger, const Design& design);

// The units this command runs now: not finished, within --unit and --shard; or a usage refusal.
std::variant<std::vector<const Unit*>, RunSummary> select_units(const Design& design, const RunRequest& request,
                                                                const std::vector<nlohmann::json>& terminal);

// The leases this command holds on units of its run dir (core/unit_lease.hpp), renewed by a background
// thread every renew_seconds. A renewal that finds a lease taken over marks it lost and raises the stop
// flag, so the unit stops early; finish() then refuses its terminal record. The destructor releases
// every lease still held (the units stay open for the next run).
class UnitClaims {
 public:
  UnitClaims(const std::filesystem::path& run_dir, const std::string& worker, core::LeaseSettings settings);
  ~UnitClaims();
  UnitClaims(const UnitClaims&) = delete;
  UnitClaims& operator=(const UnitClaims&) = delete;

  core::ClaimResult claim(const std::string& unit);
  // Appends the terminal record through `append` while the lease is still this command's, then marks
  // it done; false (nothing appended) when it was lost.
  bool finish(const std::string& unit, const std::function<void()>& append);
  void release(const std::string& unit);
  bool lost(const std::string& unit) const;
  bool holds(const std::string& unit) const;  // claimed and not lost
  const core::LeaseHolder& holder() const { return holder_; }
  const core::LeaseTable& table() const { return table_; }

 private:
  void renew_all();

  core::LeaseTable table_;
  core::LeaseHolder holder_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, bool> held_;  // unit -> lost
  bool quit_ = false;
  std::thread renewer_;
};

// Units this command claimed, and those it left to other holders (said in the summary).
struct ClaimReport {
  std::vector<std::string> skipped;  // "<unit> (leased by ...)"
};

// Claims `unit` for the loop, noting a takeover in the ledger. False when the unit is not this
// command's to run: held by a live lease, or finished by another process since the ledger was read.
bool claim_for_loop(UnitClaims& claims, core::LedgerWriter& writer, const std::filesystem::path& run_dir,
                    const std::string& unit, ClaimReport& report);

// Runs `todo` one unit at a time, recording attempts and terminal records; fills `summary`.
struct UnitLoop {
  Experiment& experiment;
  const Design& design;
  const RunRequest& request;
  core::PeerGroup* group;
  core::LedgerWriter& writer;
  const core::LedgerContents& ledger;
  UnitClaims& claims;
  ClaimReport& claim_report;
};
void run_units(UnitLoop loop, const std::vector<const Unit*>& todo, std::vector<nlohmann::json>& terminal,
               const core::RunDirInfo& run, RunSummary& summary);

}  // namespace k3lab::experiments::stages
