// Unit claims: the leases (core/unit_lease.hpp) of the units this command runs, renewed in the
// background; the rule is in docs/reliability.md ("Unit claims and leases").
#include <algorithm>

#include <spdlog/spdlog.h>

#include "runner_stages.hpp"

namespace k3lab::experiments::stages {

UnitClaims::UnitClaims(const std::filesystem::path& run_dir, const std::string& worker, core::LeaseSettings settings)
    : table_(run_dir, std::move(settings)), holder_(core::this_process_holder(worker)) {
  renewer_ = std::thread([this] {
    const auto every = std::chrono::duration<double>(table_.settings().renew_seconds);
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return quit_; })) {
      std::vector<std::string> units;
      for (const auto& [unit, lost] : held_) {
        if (!lost) units.push_back(unit);
      }
      lock.unlock();
      std::vector<std::string> lost_now;
      for (const auto& unit : units) {
        try {
          if (!table_.renew(unit, holder_.token)) lost_now.push_back(unit);
        } catch (const std::exception& e) {
          spdlog::warn("cannot renew the lease of unit {} ({}); retrying in {} s", unit, e.what(),
                       table_.settings().renew_seconds);
        }
      }
      lock.lock();
      for (const auto& unit : lost_now) {
        const auto it = held_.find(unit);
        if (it == held_.end()) continue;  // finished or released meanwhile
        it->second = true;
        stop_flag().store(true);  // stop the unit early: its terminal record will be refused anyway
        spdlog::error("the lease of unit {} was taken over by another process; stopping without recording it", unit);
      }
    }
  });
}

UnitClaims::~UnitClaims() {
  {
    const std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  renewer_.join();
  for (const auto& [unit, lost] : held_) {
    if (lost) continue;
    try {
      table_.release(unit, holder_.token);
    } catch (const std::exception& e) {
      spdlog::warn("cannot release the lease of unit {} ({}); it expires by itself", unit, e.what());
    }
  }
}

core::ClaimResult UnitClaims::claim(const std::string& unit) {
  auto result = table_.claim(unit, holder_);
  if (result.outcome == core::ClaimOutcome::Claimed || result.outcome == core::ClaimOutcome::TakenOver) {
    const std::lock_guard lock(mutex_);
    held_[unit] = false;
  }
  return result;
}

bool UnitClaims::finish(const std::string& unit, const std::function<void()>& append) {
  {
    const std::lock_guard lock(mutex_);
    const auto it = held_.find(unit);
    if (it == held_.end() || it->second) return false;
    held_.erase(it);  // the renewer must not take the done mark for a loss
  }
  try {
    return table_.finish(unit, holder_.token, append);
  } catch (...) {
    const std::lock_guard lock(mutex_);
    held_[unit] = false;  // still ours (the append failed): the destructor releases it
    throw;
  }
}

void UnitClaims::release(const std::string& unit) {
  {
    const std::lock_guard lock(mutex_);
    const auto it = held_.find(unit);
    if (it == held_.end()) return;
    const bool was_lost = it->second;
    held_.erase(it);
    if (was_lost) return;
  }
  table_.release(unit, holder_.token);
}

bool UnitClaims::lost(const std::string& unit) const {
  const std::lock_guard lock(mutex_);
  const auto it = held_.find(unit);
  return it != held_.end() && it->second;
}

bool UnitClaims::holds(const std::string& unit) const {
  const std::lock_guard lock(mutex_);
  const auto it = held_.find(unit);
  return it != held_.end() && !it->second;
}

bool claim_for_loop(UnitClaims& claims, core::LedgerWriter& writer, const std::filesystem::path& run_dir,
                    const std::string& unit, ClaimReport& report) {
  if (claims.holds(unit)) return true;
  const auto result = claims.claim(unit);
  switch (result.outcome) {
    case core::ClaimOutcome::Claimed: return true;
    case core::ClaimOutcome::Finished: return false;  // another process finished it after this one read the ledger
    case core::ClaimOutcome::HeldByOther: {
      const std::string who = core::LeaseView{core::LeaseState::Live, result.previous}.describe();
      spdlog::warn("unit {} skipped: another process runs it ({})", unit, who);
      report.skipped.push_back(unit + " (" + who + ")");
      return false;
    }
    case core::ClaimOutcome::TakenOver: break;
  }
  writer.append({{"kind", "note"},
                 {"note", "lease-taken-over"},
                 {"unit", unit},
                 {"from", result.previous->holder.to_json()},
                 {"why", result.why}});
  spdlog::warn("unit {}: took over the lease of {}: {}", unit, result.previous->holder.describe(), result.why);
  // The old holder may have appended the terminal record and died before marking its lease done.
  const auto done = core::finished_units(core::read_ledger(run_dir));
  if (std::find(done.begin(), done.end(), unit) != done.end()) {
    claims.finish(unit, [] {});
    return false;
  }
  return true;
}

}  // namespace k3lab::experiments::stages
