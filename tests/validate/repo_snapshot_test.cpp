#include "k3lab/validate/repo_snapshot.hpp"

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::validate {
namespace {

namespace fs = std::filesystem;

std::string sha256(const std::string& text) {
  core::Sha256 h;
  h.update(text);
  return h.hex_digest();
}

constexpr const char* kStatus =
    "Package: python3-other\nStatus: install ok installed\nVersion: 9.9\n\n"
    "Package: python3-demo\nStatus: install ok installed\nArchitecture: all\nVersion: 1.2-3\n\n"
    "Package: python3-gone\nStatus: deinstall ok config-files\nVersion: 0.1\n";

// A pinned two-file repository in a temporary folder: root/, the protocol folder and a dpkg status file.
class PinnedRepository : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("root/demo/__init__.py", "from .core import Thing\n");
    dir_.write("root/demo/core.py", "class Thing:\n    pass\n");
    dir_.write("status", kStatus);
    write_list();
  }
  void write_list() {
    const std::string list = sha256("from .core import Thing\n") + "  demo/__init__.py\n" +
                             sha256("class Thing:\n    pass\n") + "  demo/core.py\n";
    dir_.write("protocols/repositories/demo.sha256", list);
    pin_ = RepositoryPin::from_json({{"package", "python3-demo"},
                                     {"version", "1.2-3"},
                                     {"upstream", "Demo 1.2"},
                                     {"license", "MIT"},
                                     {"license_file", "/usr/share/doc/python3-demo/copyright"},
                                     {"root", (dir_ / "root").string()},
                                     {"files", "repositories/demo.sha256"},
                                     {"files_sha256", sha256(list)},
                                     {"file_count", 2}});
  }
  std::shared_ptr<const RepositorySnapshot> load() const {
    return load_pinned_repository(pin_, dir_ / "protocols", dir_ / "status");
  }
  k3lab::testing::TempDir dir_{"k3lab-pinned-repo"};
  RepositoryPin pin_;
};

TEST_F(PinnedRepository, LoadsTheListedFilesInOrderAndAnalysesThem) {
  const auto snapshot = load();
  ASSERT_EQ(snapshot->files.size(), 2u);
  EXPECT_EQ(snapshot->files[0].path, "demo/__init__.py");
  EXPECT_EQ(snapshot->files[1].path, "demo/core.py");
  EXPECT_EQ(snapshot->manifest.at("version"), "1.2-3");
  EXPECT_EQ(snapshot->license, "MIT");
  EXPECT_EQ(snapshot->sha256, repository_files_sha256(snapshot->files));
  ASSERT_EQ(snapshot->traced_imports.size(), 1u);
  EXPECT_EQ(snapshot->traced_imports[0].trace.defining_module().path, "demo/core.py");
}

TEST_F(PinnedRepository, AnotherVersionListOrFileIsAPinError) {
  dir_.write("status", std::string(kStatus).replace(std::string(kStatus).find("1.2-3"), 5, "1.2-4"));
  try {
    load();
    FAIL() << "another installed version must be refused";
  } catch (const RepositoryPinError& e) {
    EXPECT_NE(std::string(e.what()).find("1.2-4 is installed"), std::string::npos) << e.what();
  }
  dir_.write("status", kStatus);
  dir_.write("root/demo/core.py", "class Thing:\n    size = 2\n");
  try {
    load();
    FAIL() << "a changed file must be refused";
  } catch (const RepositoryPinError& e) {
    EXPECT_NE(std::string(e.what()).find("core.py"), std::string::npos) << e.what();
  }
  dir_.write("root/demo/core.py", "class Thing:\n    pass\n");
  dir_.write("protocols/repositories/demo.sha256", "edited\n");
  EXPECT_THROW(load(), RepositoryPinError);
}

TEST_F(PinnedRepository, AMissingPackageOrFileSaysHowToInstallIt) {
  fs::remove(dir_ / "root/demo/core.py");
  try {
    load();
    FAIL() << "a missing file must be refused";
  } catch (const RepositoryPinError&) {
    FAIL() << "a missing file is a setup problem, not a different pin";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install python3-demo=1.2-3"), std::string::npos) << e.what();
  }
  dir_.write("status", "Package: python3-other\nStatus: install ok installed\nVersion: 1\n");
  EXPECT_THROW(load(), std::runtime_error);
}

TEST_F(PinnedRepository, WithoutADpkgDatabaseTheHashesAlonePin) {
  fs::remove(dir_ / "status");
  EXPECT_EQ(load()->files.size(), 2u);
}

TEST(RepositoryPinFields, MalformedOrNonPermissivePinsAreRefusedByField) {
  nlohmann::json pin = {{"package", "p"},  {"version", "1"}, {"upstream", "u"},  {"license", "GPL-2.0-or-later"},
                        {"license_file", "c"}, {"root", "/r"}, {"files", "f"}, {"files_sha256", "h"}, {"file_count", 1}};
  try {
    RepositoryPin::from_json(pin);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not permissive"), std::string::npos);
  }
  pin["license"] = "BSD-3-Clause";
  EXPECT_NO_THROW(RepositoryPin::from_json(pin));
  pin.erase("root");
  try {
    RepositoryPin::from_json(pin);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.repository.root"), std::string::npos);
  }
}

TEST(DebianStatus, ReadsTheInstalledVersionOfOnePackage) {
  k3lab::testing::TempDir dir("k3lab-dpkg");
  const auto status = dir.write("status", kStatus);
  EXPECT_EQ(installed_debian_version("python3-demo", status), "1.2-3");
  EXPECT_EQ(installed_debian_version("python3-other", status), "9.9");
  EXPECT_EQ(installed_debian_version("python3-gone", status), std::nullopt);
  EXPECT_EQ(installed_debian_version("python3-absent", status), std::nullopt);
  EXPECT_THROW(installed_debian_version("python3-demo", dir / "missing"), std::runtime_error);
}

}  // namespace
}  // namespace k3lab::validate
