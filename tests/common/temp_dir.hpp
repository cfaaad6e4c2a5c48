#pragma once
// A fresh, private folder for one test (mkdtemp under $TMPDIR), removed with everything in it when
// the object goes out of scope.
#include <filesystem>
#include <string>

namespace k3lab::testing {

class TempDir {
 public:
  // `prefix` names the folder (<tmp>/<prefix>-XXXXXX) so a leftover says which test made it.
  explicit TempDir(const std::string& prefix = "k3lab-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const { return path_ / relative; }
  // Writes `content` (bytes as given) to `relative`, creating its folders; returns the full path.
  std::filesystem::path write(const std::filesystem::path& relative, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

}  // namespace k3lab::testing
