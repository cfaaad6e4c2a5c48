#pragma once
// A fault of the machine a run executes on, not an outcome of the experiment: a full disk, an I/O
// error, a lost lock, a torn or unreadable checkpoint. The runner never records one as a unit's terminal
// record: it stops the command (exit 1), leaves the unit open, and the next run redoes or resumes it.
// Layers throw it where they know an error is environmental; the runner's classification
// (experiments/fault_class.hpp) also recognises the system errors that mean the same.
#include <stdexcept>
#include <string>

namespace k3lab::core {

class EnvironmentFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace k3lab::core
