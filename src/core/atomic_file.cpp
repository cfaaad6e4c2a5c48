#include "k3lab/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace k3lab::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content, Durability durability) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno) +
                             "; check that the folder exists and is writable");
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err) +
                               (err == ENOSPC ? "; the disk is full: free space and run again" : ""));
    }
    written += static_cast<std::size_t>(n);
  }
  if ((durability == Durability::Durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot flush " + path.string() + ": " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + std::strerror(errno));
  }
  if (durability == Durability::Durable) {
    fsync_directory(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
  }
}

void fsync_directory(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EACCES) return;  // a folder we may write but not read: nothing more can be done
    throw std::runtime_error("cannot open the folder " + folder.string() + " to flush it: " + std::strerror(errno));
  }
  const int result = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (result != 0 && err != EINVAL && err != EROFS) {
    throw std::runtime_error("cannot flush the folder " + folder.string() + ": " + std::strerror(err) +
                             (err == ENOSPC ? "; the disk is full: free space and run again" : ""));
  }
}

}  // namespace k3lab::core
