#pragma once
// "The decision waits for every run": a proxy experiment reads its predeclared decision rule only once
// every planned run has ended (a verdict may be shown, marked not final, before that) or, for rules
// over valid results, once every planned run is a valid result.
#include <cstddef>
#include <string>

namespace k3lab::experiments::training {

struct DecisionGate {
  std::size_t counted = 0;  // runs that count toward the rule: ended, or valid results
  std::size_t planned = 0;  // from the frozen plan; 0 when unknown

  bool open() const { return planned > 0 && counted >= planned; }
  // "Not final: <counted> of <planned> <runs> have ended. ", or "" once open.
  std::string not_final(const std::string& runs = "planned runs") const;
  // "Decision rule not evaluated: <counted> of <planned> planned runs are valid results. <why> <stopping_rule>"
  std::string not_evaluated(const std::string& why, const std::string& stopping_rule) const;
};

}  // namespace k3lab::experiments::training
