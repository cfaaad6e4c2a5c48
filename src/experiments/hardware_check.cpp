#include "k3lab/experiments/hardware_check.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/core/ledger.hpp"

namespace k3lab::experiments {
namespace {

// The fingerprint's id as recorded, or computed from its facts when a hand-written record lacks one.
std::string recorded_id(const nlohmann::json& fingerprint) {
  if (fingerprint.contains("id") && fingerprint.at("id").is_string()) return fingerprint.at("id").get<std::string>();
  return core::fingerprint_id(fingerprint);
}

std::string units_text(std::size_t units) { return std::to_string(units) + (units == 1 ? " unit" : " units"); }

// A line of the page's Reproduce section (the ordinary case stays out of the results).
void add_reproduce_line(std::string markdown, report::Page& page) {
  report::Block block;
  block.markdown = std::move(markdown);
  page.reproduce.push_back(std::move(block));
}

}  // namespace

HardwareGroups terminal_unit_hardware(const RunRecords& records) {
  // (unit, worker) -> id of its last attempt's fingerprint ("" when the attempt has none).
  std::map<std::pair<std::string, std::string>, std::string> last_attempt;
  std::map<std::string, std::string> unit_fingerprint;  // unit -> id ("" not recorded)
  std::map<std::string, nlohmann::json> fingerprints;   // id -> fingerprint
  for (const auto& r : records.ledger.records) {
    const std::string kind = r.value("kind", "");
    const std::pair<std::string, std::string> key{r.value("unit", ""), r.value("worker", "")};
    if (kind == "attempt") {
      std::string id;
      if (r.contains("hardware") && r.at("hardware").is_object()) {
        id = recorded_id(r.at("hardware"));
        fingerprints.emplace(id, r.at("hardware"));
      }
      last_attempt[key] = id;
    } else if (core::is_terminal_kind(kind)) {
      const auto attempt = last_attempt.find(key);
      unit_fingerprint[key.first] = attempt == last_attempt.end() ? std::string() : attempt->second;
    }
  }
  HardwareGroups groups;
  std::map<std::string, std::size_t> counts;
  for (const auto& [unit, id] : unit_fingerprint) {
    if (id.empty()) {
      ++groups.not_recorded;
    } else {
      ++counts[id];
    }
  }
  for (const auto& [id, units] : counts) groups.recorded.push_back({fingerprints.at(id), units});
  std::stable_sort(groups.recorded.begin(), groups.recorded.end(),
                   [](const HardwareGroup& a, const HardwareGroup& b) { return a.units > b.units; });
  return groups;
}

std::string describe_fingerprint(const nlohmann::json& fingerprint) {
  const auto cpu = fingerprint.value("cpu", nlohmann::json::object());
  std::string text = "cpu " + cpu.value("model", std::string("unknown")) + " (" +
                     std::to_string(cpu.value("logical_cores", 0L)) + " logical cores), device " +
                     fingerprint.value("device", std::string("unknown"));
  if (fingerprint.contains("accelerator")) {
    const auto& a = fingerprint.at("accelerator");
    text += ", " + std::to_string(a.value("count", 0)) + " x " + a.value("model", std::string("unknown")) +
            ", driver " + a.value("driver", std::string("unknown")) + ", CUDA " +
            a.value("cuda_runtime", std::string("unknown"));
  }
  return text + ", LibTorch " + fingerprint.value("libtorch", std::string("unknown")) + " [id " +
         recorded_id(fingerprint) + "]";
}

bool mixed_hardware_allowed(const core::Protocol& protocol) {
  const auto controls = protocol.document.value("controls", nlohmann::json::object());
  return controls.is_object() && controls.value("mixed_hardware", std::string()) == "allowed";
}

void add_hardware_check(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  const auto groups = terminal_unit_hardware(records);
  const std::string unrecorded =
      groups.not_recorded == 0 ? "" : "; " + units_text(groups.not_recorded) + " without a recorded fingerprint";
  if (groups.recorded.empty()) {
    if (groups.not_recorded > 0) {
      add_reproduce_line(
          "**Hardware**: not recorded (the attempt records of this run carry no fingerprint; they predate it).", page);
    }
    return;
  }
  if (!groups.mixed()) {
    add_reproduce_line("**Hardware**: every unit with a recorded fingerprint ran on " +
                           describe_fingerprint(groups.recorded[0].fingerprint) + " (" +
                           units_text(groups.recorded[0].units) + unrecorded + ").",
                       page);
    return;
  }
  const bool allowed = mixed_hardware_allowed(protocol);
  const std::string count = std::to_string(groups.recorded.size());
  page.status = std::string(kMixedHardwareStatus) + ": the units ran on " + count + " hardware fingerprints (" +
                (allowed ? "the protocol allows it" : "comparisons across them are not evidence") + "); " + page.status;
  std::string text =
      "**Hardware: MIXED.** The units of this run ran on " + count +
      " hardware fingerprints, so its comparisons mix machines or builds; " +
      (allowed ? std::string("the protocol allows it (controls.mixed_hardware: allowed).")
               : std::string("a decision rule is not read over them. Rerun the units of the other "
                             "fingerprints on one machine configuration.")) +
      (groups.not_recorded == 0 ? "" : " Without a recorded fingerprint: " + units_text(groups.not_recorded) + ".") +
      "\n";
  for (const auto& group : groups.recorded) {
    text += "\n- " + units_text(group.units) + ": " + describe_fingerprint(group.fingerprint);
  }
  page.add_text(text);
}

}  // namespace k3lab::experiments
