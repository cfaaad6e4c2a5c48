#pragma once
// The lock held while a command chooses or creates a run dir of one experiment: an exclusive flock on
// <runs root>/<id>/.lock. Two `run` commands started together on a fresh runs root then agree on one
// run dir: the second waits, and finds the first one's dir when it looks.
#include <filesystem>
#include <string>

namespace k3lab::core {

class RunChoiceLock {
 public:
  // Creates <runs_root>/<experiment_id>/ if needed, then waits until this object holds its lock.
  // flock locks belong to an open file, so two objects conflict even within one process: never take
  // a second one for the same experiment while holding the first.
  RunChoiceLock(const std::filesystem::path& runs_root, const std::string& experiment_id);
  ~RunChoiceLock();
  RunChoiceLock(const RunChoiceLock&) = delete;
  RunChoiceLock& operator=(const RunChoiceLock&) = delete;

  const std::filesystem::path& runs_root() const { return runs_root_; }
  const std::string& experiment_id() const { return experiment_id_; }

 private:
  std::filesystem::path runs_root_;
  std::string experiment_id_;
  int fd_ = -1;
};

}  // namespace k3lab::core
