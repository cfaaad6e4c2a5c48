#pragma once
// The stages of run_experiment (runner.cpp), one concept per file; private to the spine.
//   design      run_design.cpp      protocol, freeze and --set checks -> the resolved design
//   peers       peer_ranks.cpp      ranks other than 0 of a data-parallel command, and rank 0's messages
//   run dir     run_dir_choice.cpp  resume, refuse, or create the run dir (under the experiment's lock)
//   units       unit_loop.cpp       attempts, terminal records, window rules, progress
#include <chrono>
#include <memory>
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

// Writes the frozen plan record unless the ledger holds one.
void write_plan_once(core::LedgerWriter& writer, const core::LedgerContents& ledger, const Design& design);

// The units this command runs now: not finished, within --unit and --shard; or a usage refusal.
std::variant<std::vector<const Unit*>, RunSummary> select_units(const Design& design, const RunRequest& request,
                                                                const std::vector<nlohmann::json>& terminal);

// Runs `todo` one unit at a time, recording attempts and terminal records; fills `summary`.
struct UnitLoop {
  Experiment& experiment;
  const Design& design;
  const RunRequest& request;
  core::PeerGroup* group;
  core::LedgerWriter& writer;
  const core::LedgerContents& ledger;
};
void run_units(UnitLoop loop, const std::vector<const Unit*>& todo, std::vector<nlohmann::json>& terminal,
               const core::RunDirInfo& run, RunSummary& summary);

}  // namespace k3lab::experiments::stages
