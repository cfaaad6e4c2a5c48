#pragma once
// The module the spine's tests run under minimal_protocol() (test_protocol_fixture.hpp): its parameter
// schema, units u=0..units-1 with spec {"index": i}, and no page. A test derives from it and supplies
// run_unit (and a window rule when it needs one).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::testing {

class IndexedUnitsExperiment : public experiments::Experiment {
 public:
  IndexedUnitsExperiment() {
    schema_.integer("units", "units").at_least(1);
    schema_.integer("seed", "seed");
    schema_.integer("invalid_every", "n").at_least(0);
    schema_.integer("fail_unit", "index");
  }
  std::string id() const override { return "memory-pool"; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<experiments::Unit> enumerate(const core::Protocol&, const nlohmann::json& p) const override {
    std::vector<experiments::Unit> units;
    for (int i = 0; i < p["units"].get<int>(); ++i) units.push_back({"u=" + std::to_string(i), {{"index", i}}});
    return units;
  }
  void summarise(const core::Protocol&, const experiments::RunRecords&, report::Page&) const override {}

 private:
  core::Schema schema_;
};

}  // namespace k3lab::testing
