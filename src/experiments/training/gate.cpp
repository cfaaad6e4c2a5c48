#include "k3lab/experiments/training/gate.hpp"

namespace k3lab::experiments::training {

std::string DecisionGate::not_final(const std::string& runs) const {
  if (open()) return "";
  return "Not final: " + std::to_string(counted) + " of " + std::to_string(planned) + " " + runs + " have ended. ";
}

std::string DecisionGate::not_evaluated(const std::string& why, const std::string& stopping_rule) const {
  return "Decision rule not evaluated: " + std::to_string(counted) + " of " + std::to_string(planned) +
         " planned runs are valid results. " + why + " " + stopping_rule;
}

}  // namespace k3lab::experiments::training
