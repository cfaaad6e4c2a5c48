#pragma once
// Whether a proxy experiment's page may read its decision rule: only once every planned run has a
// terminal record (failure_rule.hpp), never on the smoke profile, whose toy sizes are no evidence
// about the hypothesis, and never over units that ran on more than one hardware fingerprint unless the
// protocol allows it (experiments/hardware_check.hpp). Until every run has ended, every table and chart
// after the records table is labelled "partial: k of n runs".
#include <cstddef>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::training {

// The manifest's profile is "smoke".
bool smoke_profile(const nlohmann::json& manifest);

// True when the decision may be shown; otherwise adds why it is not evaluated and returns false.
bool decision_readable(const RunOutcomes& outcomes, const core::Protocol& protocol, const RunRecords& records,
                       report::Page& page);

// Appends " (partial: <ended> of <planned> runs)" to the title of every table and chart from
// `first_block` on, unless every planned run has ended.
void label_partial(report::Page& page, std::size_t first_block, std::size_t ended, std::size_t planned);

}  // namespace k3lab::experiments::training
