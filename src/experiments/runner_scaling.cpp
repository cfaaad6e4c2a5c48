#include "k3lab/experiments/runner_scaling.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments {
namespace {

constexpr const char* kId = "runner-scaling";

// What the module sees of the runner: when each unit started, and how many terminal records the window
// rule had been fed by then.
struct Observed {
  std::vector<std::chrono::steady_clock::time_point> unit_starts;
  std::vector<std::size_t> fed_before_unit;
  std::size_t fed = 0;
};

class CountingWindowRule final : public WindowRule {
 public:
  explicit CountingWindowRule(Observed& observed) : observed_(observed) {}
  void add(const nlohmann::json&) override { ++observed_.fed; }
  WindowVerdict verdict() const override { return {}; }

 private:
  Observed& observed_;
};

// Units that do nothing: the time between two unit starts is the runner's own work.
class EmptyUnits final : public Experiment {
 public:
  explicit EmptyUnits(Observed& observed) : observed_(observed) {
    schema_.integer("units", "units to run").at_least(1);
  }
  std::string id() const override { return kId; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<Unit> enumerate(const core::Protocol&, const nlohmann::json& parameters) const override {
    std::vector<Unit> units;
    const auto n = parameters.at("units").get<std::size_t>();
    units.reserve(n);
    for (std::size_t i = 0; i < n; ++i) units.push_back({"u=" + std::to_string(i), {{"index", i}}});
    return units;
  }
  UnitOutcome run_unit(const Unit& unit, RunEnv&) override {
    observed_.unit_starts.push_back(std::chrono::steady_clock::now());
    observed_.fed_before_unit.push_back(observed_.fed);
    return UnitOutcome::result({{"index", unit.spec.at("index")}});
  }
  std::unique_ptr<WindowRule> window_rule(const core::Protocol&, const nlohmann::json&) const override {
    return std::make_unique<CountingWindowRule>(observed_);
  }
  void summarise(const core::Protocol&, const RunRecords&, report::Page&) const override {}

 private:
  Observed& observed_;
  core::Schema schema_;
};

nlohmann::json protocol_document(std::size_t units) {
  return {{"id", kId},
          {"title", "the runner's per-unit work (a benchmark module, not an experiment)"},
          {"seed_section", "none"},
          {"evidence_class", "systems-simulation"},
          {"hypothesis", "the runner's work per unit does not grow with the number of units"},
          {"arms", {{{"id", "empty"}, {"description", "units that do nothing"}, {"requested_by_seed", false}}}},
          {"controlled_variables", {"everything"}},
          {"metrics", {{{"name", "seconds per unit"}, {"description", "between two unit starts"}}}},
          {"evaluation_cadence", "every unit"},
          {"stopping_rule", "all units"},
          {"invalid_run_rule", "none"},
          {"decision_rule", "none"},
          {"can_say", {"runner overhead"}},
          {"cannot_say", {"anything about a model"}},
          {"parameters", {{"units", units}}},
          {"profiles", {{"full", nlohmann::json::object()}, {"smoke", nlohmann::json::object()}}}};
}

std::vector<RunnerScalingBlock> blocks_of(const Observed& observed, std::size_t block) {
  std::vector<RunnerScalingBlock> blocks;
  const auto& starts = observed.unit_starts;
  for (std::size_t begin = 0; begin + 1 < starts.size(); begin += block) {
    const std::size_t end = std::min(begin + block, starts.size() - 1);  // the last unit has no successor
    RunnerScalingBlock b;
    for (std::size_t i = begin; i < end; ++i) {
      b.unit_seconds.push_back(std::chrono::duration<double>(starts[i + 1] - starts[i]).count());
    }
    b.window_records_fed = observed.fed_before_unit[end] - observed.fed_before_unit[begin];
    blocks.push_back(std::move(b));
  }
  return blocks;
}

}  // namespace

RunnerScaling measure_runner_scaling(const RunnerScalingOptions& options) {
  if (options.units < 2 || options.block < 1) throw std::invalid_argument("runner scaling: units >= 2 and block >= 1");
  const auto protocol_file = options.folder / (std::string(kId) + ".json");
  std::ofstream(protocol_file) << protocol_document(options.units).dump(2);
  Observed observed;
  observed.unit_starts.reserve(options.units);
  observed.fed_before_unit.reserve(options.units);
  RunRequest request;
  request.experiment_id = kId;
  request.profile = "full";
  request.unfrozen = true;
  request.runs_root = options.folder / "runs";
  request.protocol_file = protocol_file;
  request.experiment_factory = [&observed] { return std::make_unique<EmptyUnits>(observed); };
  const auto summary = run_experiment(request);
  RunnerScaling scaling;
  scaling.units_run = summary.ran_now;
  scaling.exit_code = summary.exit_code;
  scaling.blocks = blocks_of(observed, options.block);
  return scaling;
}

int run_runner_bench(const nlohmann::json& options, std::ostream& out) {
  RunnerScalingOptions o;
  for (const auto& [key, value] : options.items()) {
    if (key != "units" && key != "block") throw std::invalid_argument("bench runner: unknown --opt key \"" + key + "\"");
    if (!value.is_number_unsigned()) throw std::invalid_argument("bench runner: --opt " + key + " needs a positive integer");
  }
  o.units = options.value("units", o.units);
  o.block = options.value("block", o.block);
  std::string folder = (std::filesystem::temp_directory_path() / "k3lab-runner-bench-XXXXXX").string();
  if (!::mkdtemp(folder.data())) throw std::runtime_error("bench runner: cannot create a folder under $TMPDIR");
  o.folder = folder;
  RunnerScaling scaling;
  try {
    scaling = measure_runner_scaling(o);
  } catch (...) {
    std::filesystem::remove_all(folder);
    throw;
  }
  std::filesystem::remove_all(folder);
  out << "runner: " << scaling.units_run << " empty units in one process (" << o.block << " a block); per-unit "
      << "time is from one unit's start to the next (attempt and terminal records, lease, window rule)\n\n"
      << "| block | units | median ms | min ms | max ms | window records fed |\n|---|---|---|---|---|---|\n";
  char row[160];
  for (std::size_t b = 0; b < scaling.blocks.size(); ++b) {
    const auto& block = scaling.blocks[b];
    const auto [lo, hi] = std::minmax_element(block.unit_seconds.begin(), block.unit_seconds.end());
    std::snprintf(row, sizeof row, "| %zu | %zu | %.3f | %.3f | %.3f | %zu |\n", b + 1, block.unit_seconds.size(),
                  1e3 * report::median(block.unit_seconds), 1e3 * *lo, 1e3 * *hi, block.window_records_fed);
    out << row;
  }
  if (scaling.blocks.size() >= 2) {
    const double first = report::median(scaling.blocks.front().unit_seconds);
    const double last = report::median(scaling.blocks.back().unit_seconds);
    std::snprintf(row, sizeof row, "\nlast block / first block median per-unit time: %.2f (goal: at most 2)\n",
                  last / first);
    out << row;
  }
  return scaling.exit_code;
}

}  // namespace k3lab::experiments
