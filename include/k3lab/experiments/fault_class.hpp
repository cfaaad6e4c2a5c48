#pragma once
// Transient versus terminal, decided in one place: whether an exception that left a unit is an outcome
// of the experiment (a terminal `failure` record of its arm) or a fault of the environment (no record;
// the command stops and the unit stays open for the next run). The table is in docs/reliability.md.
#include <exception>
#include <string>

namespace k3lab::experiments {

struct FaultClass {
  bool environmental = false;
  std::string reason;  // a failure class for an outcome ("exception"); the fault's name otherwise
};

// Environmental: core::EnvironmentFault; a std::system_error (std::filesystem::filesystem_error
// included) whose code is one of the I/O faults of the table (ENOSPC, EDQUOT, EFBIG, EIO, EROFS, ENOLCK,
// ESTALE, ENODEV); and any exception whose message carries one of those system messages or a LibTorch
// checkpoint stream error (LibTorch reports them only as c10::Error text). Everything else is an
// outcome of the arm ("exception").
FaultClass classify_exception(const std::exception& error);

}  // namespace k3lab::experiments
