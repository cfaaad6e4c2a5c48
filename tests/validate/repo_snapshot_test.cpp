#include "k3lab/validate/repo_snapshot.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir.hpp"
#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/context_reader.hpp"
#include "k3lab/validate/context_validator.hpp"

namespace k3lab::validate {
namespace {

namespace fs = std::filesystem;

class SnapshotDir : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(root_ / "lib"); }
  void write(const fs::path& relative, const std::string& text) {
    std::ofstream(root_ / relative, std::ios::binary) << text;
  }
  k3lab::testing::TempDir dir_{"k3lab-snapshot"};
  fs::path root_ = dir_.path();
};

TEST_F(SnapshotDir, LoadsSortedTextFilesAndHashesThem) {
  write("k3lab-snapshot.json", R"({"name":"tiny","revision":"abc123","license":"MIT","source":"local"})");
  write("lib/b.py", "def b():\n    return None\n");
  write("a.txt", "no trailing newline");
  write("lib/blob.bin", std::string("\0\1\2", 3));
  const RepositorySnapshot snapshot = load_repository_snapshot(root_);
  ASSERT_EQ(snapshot.files.size(), 2u);
  EXPECT_EQ(snapshot.files[0].path, "a.txt");
  EXPECT_EQ(snapshot.files[0].content, "no trailing newline\n");
  EXPECT_EQ(snapshot.files[1].path, "lib/b.py");
  EXPECT_EQ(snapshot.skipped_files, 1u);
  EXPECT_EQ(snapshot.manifest.at("revision"), "abc123");
  EXPECT_EQ(snapshot.sha256, repository_files_sha256(snapshot.files));
  // The hash covers paths as well as contents.
  std::vector<SnapshotFile> renamed = snapshot.files;
  renamed[0].path = "b.txt";
  EXPECT_NE(repository_files_sha256(renamed), snapshot.sha256);
}

TEST_F(SnapshotDir, RejectsMissingOrNonPermissiveManifests) {
  write("a.py", "x = 1\n");
  try {
    load_repository_snapshot(root_);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("k3lab-snapshot.json"), std::string::npos);
  }
  write("k3lab-snapshot.json", R"({"name":"tiny","revision":"abc","license":"GPL-3.0-only"})");
  EXPECT_THROW(load_repository_snapshot(root_), std::runtime_error);
  write("k3lab-snapshot.json", R"({"name":"tiny","license":"MIT"})");
  try {
    load_repository_snapshot(root_);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("revision"), std::string::npos);
  }
  write("k3lab-snapshot.json", "{not json");
  EXPECT_THROW(load_repository_snapshot(root_), std::runtime_error);
  EXPECT_THROW(load_repository_snapshot(root_ / "missing"), std::runtime_error);
}

TEST_F(SnapshotDir, PinnedSnapshotLeadsTheRepositoryFiller) {
  write("k3lab-snapshot.json", R"({"name":"tiny","revision":"abc123","license":"Apache-2.0"})");
  write("lib/util.py", "def helper(values):\n    return sorted(values)\n");
  write("README.md", "A tiny pinned project.\n");
  auto snapshot = std::make_shared<RepositorySnapshot>(load_repository_snapshot(root_));
  FixtureRequest request;
  request.seed = 3;
  request.family = FixtureFamily::repository;
  request.index = 2;
  request.target_tokens = 9000;
  request.repository_snapshot = snapshot;
  const ContextFixture f = generate_context_fixture(request);
  ASSERT_TRUE(f.repository.has_value());
  EXPECT_FALSE(f.repository->synthetic);
  EXPECT_EQ(f.repository->snapshot_files_used, 2u);
  EXPECT_EQ(f.repository->snapshot_sha256, snapshot->sha256);
  EXPECT_NE(f.repository->license.find("Apache-2.0"), std::string::npos);
  EXPECT_NE(f.prompt.find("FILE: lib/util.py\ndef helper(values):"), std::string::npos);
  EXPECT_LE(f.prompt_tokens, 9000u);
  // The traced chain still resolves.
  ReaderConfig perfect;
  perfect.base_failure = 0;
  perfect.max_failure = 0;
  EXPECT_TRUE(validate_context_answer(f, read_fixture_prompt(f.prompt, perfect).text).passed);

  request.family = FixtureFamily::multi_hop;
  EXPECT_THROW(generate_context_fixture(request), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::validate
