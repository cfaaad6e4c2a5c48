#pragma once
// Temporary folders for the train tests: unique per test, removed afterwards.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace k3lab::train::testing {

inline std::filesystem::path fresh_temp_dir(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::temp_directory_path() /
             ("k3lab-train-" + tag + "-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
              std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct TempDir {
  explicit TempDir(const std::string& tag) : path(fresh_temp_dir(tag)) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

}  // namespace k3lab::train::testing
