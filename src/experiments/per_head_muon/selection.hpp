#pragma once
// The predeclared selection of each arm's confirmatory configuration (units.hpp kSelectionRule):
// lowest mean pilot validation loss at the pilot budget over the pilot seeds; a failed or invalid
// pilot counts as infinite loss; ties go to the lower configuration id. Reads terminal records only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "per_head_muon/parameters.hpp"

namespace k3lab::experiments::per_head_muon {

struct ConfigurationScore {
  Configuration configuration;
  std::vector<double> losses;  // one per pilot seed (infinity for a failed or invalid pilot)
  double mean_loss = 0;
};

struct Selection {
  std::string arm;
  std::vector<std::string> missing;  // pilot unit ids without a terminal record
  std::vector<ConfigurationScore> scores;
  std::optional<Configuration> selected;  // set when every pilot of the arm has ended

  nlohmann::json to_json() const;
};

// The final validation loss of a pilot's terminal record; infinity for failure or invalid.
double pilot_loss(const nlohmann::json& terminal_record);

Selection select_configuration(const Parameters& p, const std::string& arm,
                               const std::vector<nlohmann::json>& terminal_records);

}  // namespace k3lab::experiments::per_head_muon
