#include "k3lab/core/run_choice_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "k3lab/core/atomic_file.hpp"

namespace k3lab::core {

RunChoiceLock::RunChoiceLock(const std::filesystem::path& runs_root, const std::string& experiment_id)
    : runs_root_(runs_root), experiment_id_(experiment_id) {
  const auto folder = runs_root / experiment_id;
  std::error_code error;
  if (std::filesystem::create_directories(folder, error)) {
    fsync_directory(folder.parent_path());
  }
  if (error) {
    throw std::runtime_error("cannot create " + folder.string() + ": " + error.message() +
                             "; pass a writable --out folder");
  }
  const auto lock_path = folder / ".lock";
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open " + lock_path.string() + ": " + std::strerror(errno) +
                             "; pass a writable --out folder");
  }
  int result = ::flock(fd_, LOCK_EX | LOCK_NB);
  if (result != 0 && errno == EWOULDBLOCK) {
    spdlog::info("{}: another k3lab process is choosing a run dir; waiting for it", folder.string());
    do {
      result = ::flock(fd_, LOCK_EX);
    } while (result != 0 && errno == EINTR);
  }
  if (result == 0) return;
  const int err = errno;
  ::close(fd_);
  throw std::runtime_error("cannot lock " + lock_path.string() + ": " + std::strerror(err) +
                           "; the runs folder must be on a file system with flock (a local disk or NFSv4)");
}

RunChoiceLock::~RunChoiceLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace k3lab::core
