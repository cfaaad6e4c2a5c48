#pragma once
// The frozen call ledger of context-probe: every scored cell and every warm-prefix priming call.
//
// Unit ids:  family=<f>/fixture=<i>/length=<budget>/stratum=<cold|warm>/rep=<r>   (scored cells)
//            prime/family=<f>/fixture=<i>/length=<budget>/rep=<r>                 (priming calls)
// fixture and rep count from 1. Execution order: repetition by repetition; inside a repetition the
// (family, fixture, length) blocks are shuffled by order_seed so that budget and family are not
// confounded with time of day inside the 24-hour window; each block runs cold, prime, warm so that a
// warm cell follows its own priming call directly and the cold cell runs before any call that shares
// its fixture text.
#include <string>
#include <vector>

#include "context_probe/parameters.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

// The two cache strata, which are also the protocol's arms; never averaged together.
inline constexpr const char* kCold = "cold";
inline constexpr const char* kWarm = "warm";

// Throws std::invalid_argument unless the protocol's arms are exactly the two strata.
void require_arms(const std::vector<core::Arm>& arms);

std::string scored_unit_id(const std::string& family, std::size_t fixture, std::int64_t length,
                           const std::string& stratum, int rep);
std::string priming_unit_id(const std::string& family, std::size_t fixture, std::int64_t length, int rep);
// The prefix id a cell's prompt carries; a warm cell shares it with its priming call, a cold cell's
// is used nowhere else. The runner salts it with the window id so that a rerun never hits an old cache.
std::string prefix_id(const std::string& family, std::size_t fixture, std::int64_t length, int rep,
                      const std::string& stratum);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::context_probe
