#pragma once
// A unit's saved progress that this command must not continue: its checkpoint was written by another
// trainer configuration or another data-parallel world size. Neither is an outcome of the experiment,
// so the runner records no terminal record: it stops the command (exit 1) with the message, which says
// how to resume (the same world size) or restart the unit (move the checkpoint folder away).
#include <stdexcept>
#include <string>

namespace k3lab::core {

class ResumeRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace k3lab::core
