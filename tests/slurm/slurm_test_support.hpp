#pragma once
// A throwaway folder for the Slurm tests.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace k3lab::testing {

class SlurmTempDir {
 public:
  SlurmTempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("k3lab-slurm-test-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~SlurmTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  SlurmTempDir(const SlurmTempDir&) = delete;
  SlurmTempDir& operator=(const SlurmTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace k3lab::testing
