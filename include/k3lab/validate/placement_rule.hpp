#pragma once
// The evidence-placement rule of experiment 1: fixed fractional depths per fixture index.
//
// Depth is the fraction of the document body (estimated tokens) that precedes a section.
// The index i = 0..7 controls how far the required evidence sits from the question and from itself:
//   spread(i) = 0.10 + 0.80 * i / 7                       (0.10 ... 0.90)
//   single and distractor retrieval: the one required fact sits at depth 0.95 - 0.90 * i / 7, so
//     its distance to the question (placed after the document) grows with i (0.05 ... 0.95);
//   multi-hop, order-state, repository: the m required sections sit at the evenly spaced depths
//     0.5 - spread/2 + spread * k / (m - 1), k = 0..m-1, so both their mutual distance and the
//     distance from the first of them to the question grow with i.
// Non-required competitor sections (distractors) sit at fixed depths that do not depend on i.
#include <vector>

#include "k3lab/validate/fixture_family.hpp"

namespace k3lab::validate {

double required_spread(int index);
// Depths of the `count` required sections, in ascending order. Throws std::invalid_argument for an
// index outside 0..7, a count < 1, or a count other than 1 for the two retrieval families.
std::vector<double> required_depths(FixtureFamily family, int index, int count);
// Fixed depths for `count` competitor sections of a family (cycled when count exceeds the table).
std::vector<double> distractor_depths(FixtureFamily family, int count);

}  // namespace k3lab::validate
