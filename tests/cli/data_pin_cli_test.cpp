// Pinned datasets through the binary (issue 14): `k3lab data manifest` writes the manifest and prints
// its hash; `k3lab run` of a proxy experiment reading a dataset folder refuses (exit 3, no record
// anywhere) a folder without a manifest, a protocol whose pin is null or different, and a folder whose
// shards differ; a folder that matches runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

// An llm.c uint16 shard written here, independently of k3lab's writer: 256 int32 header, then tokens.
void write_byte_shard(const std::filesystem::path& path, const std::string& text) {
  std::int32_t header[256] = {};
  header[0] = 20240520;
  header[1] = 1;
  header[2] = static_cast<std::int32_t>(text.size());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header), sizeof header);
  for (const unsigned char c : text) {
    const std::uint16_t token = c;
    out.write(reinterpret_cast<const char*>(&token), 2);
  }
}

// <root>/jargon-toy: the built-in excerpt split 90/10 like builtin-tiny, as byte-token shards.
std::filesystem::path jargon_toy(const std::filesystem::path& root) {
  const auto dir = root / "jargon-toy";
  std::filesystem::create_directories(dir);
  const auto text = read_file(source_dir() / "fixtures/corpus/jargon-4.4.7-excerpt.txt");
  const auto split = static_cast<std::size_t>(static_cast<double>(text.size()) * 0.9);
  write_byte_shard(dir / "toy_train_000001.bin", text.substr(0, split));
  write_byte_shard(dir / "toy_val_000000.bin", text.substr(split));
  return dir;
}

std::string hash_by_sha256sum(const std::filesystem::path& path) {
  FILE* pipe = ::popen(("/usr/bin/sha256sum '" + path.string() + "'").c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buffer[65] = {};
  const auto got = std::fread(buffer, 1, 64, pipe);
  ::pclose(pipe);
  return std::string(buffer, got);
}

std::vector<std::filesystem::path> ledgers_under(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::exists(root)) return found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() == "ledger.jsonl") found.push_back(entry.path());
  }
  return found;
}

// The result records of the one ledger under `runs` (none when there is no single ledger).
std::vector<nlohmann::json> result_records(const std::filesystem::path& runs) {
  const auto ledgers = ledgers_under(runs);
  EXPECT_EQ(ledgers.size(), 1u);
  std::vector<nlohmann::json> results;
  if (ledgers.size() != 1) return results;
  std::ifstream in(ledgers.front());
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record.value("kind", "") == "result") results.push_back(std::move(record));
  }
  return results;
}

ProcessOptions with_repository_protocols() {
  ProcessOptions options;
  options.env["K3LAB_PROTOCOL_DIR"] = (source_dir() / "experiments").string();
  return options;
}

// `k3lab run situ-qat --profile smoke` on the toy folder with the pin `pin` (a JSON value for --set).
ProcessResult run_pinned(const TempDir& dir, const std::string& pin, const std::filesystem::path& runs) {
  const std::vector<std::string> args = {"run",
                                         "situ-qat",
                                         "--profile",
                                         "smoke",
                                         "--unfrozen",
                                         "--device",
                                         "cpu",
                                         "--threads",
                                         "1",
                                         "--set",
                                         "data.dataset=\"jargon-toy\"",
                                         "--set",
                                         "data.manifest_sha256=" + pin,
                                         "--data-dir",
                                         dir.path().string(),
                                         "--out",
                                         runs.string()};
  return run_k3lab(args, with_repository_protocols());
}

TEST(DataManifestCli, WritesTheManifestAndPrintsItsHash) {
  TempDir dir("k3lab-data-cli");
  const auto folder = jargon_toy(dir.path());
  const auto missing = run_k3lab({"data", "manifest", folder.string(), "--licence", "public domain"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output();
  EXPECT_NE(missing.err.find("--source"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(folder / "manifest.json"));

  const auto written = run_k3lab({"data", "manifest", folder.string(), "--tokenizer", "bytes", "--source",
                                  "fixtures/corpus excerpt", "--licence", "public domain"});
  ASSERT_EQ(written.exit_code, 0) << written.output();
  const auto hash = hash_by_sha256sum(folder / "manifest.json");
  EXPECT_NE(written.out.find("manifest sha256 " + hash), std::string::npos) << written.out;
  const auto manifest = nlohmann::json::parse(read_file(folder / "manifest.json"));
  EXPECT_EQ(manifest.at("shards").at(0).at("sha256"), hash_by_sha256sum(folder / "toy_train_000001.bin"));

  const auto help = run_k3lab({"data", "--help"});
  EXPECT_NE(help.out.find("Examples:"), std::string::npos) << help.out;
}

TEST(DataPinCli, RunRefusesAnUnpinnedOrDifferentFolderAndRecordsNothing) {
  TempDir dir("k3lab-data-cli");
  const auto folder = jargon_toy(dir.path());
  const auto runs = dir.path() / "runs";
  const auto no_manifest = run_pinned(dir, "\"" + std::string(64, 'a') + "\"", runs);
  EXPECT_EQ(no_manifest.exit_code, 3) << no_manifest.output();
  EXPECT_NE(no_manifest.err.find("manifest.json"), std::string::npos) << no_manifest.err;

  const auto written = run_k3lab({"data", "manifest", folder.string(), "--tokenizer", "bytes", "--source",
                                  "fixtures/corpus excerpt", "--licence", "public domain"});
  ASSERT_EQ(written.exit_code, 0) << written.output();
  const auto hash = hash_by_sha256sum(folder / "manifest.json");
  const auto null_pin = run_pinned(dir, "null", runs);
  EXPECT_EQ(null_pin.exit_code, 3) << null_pin.output();
  EXPECT_NE(null_pin.err.find("k3lab freeze"), std::string::npos) << null_pin.err;
  const auto different = run_pinned(dir, "\"" + std::string(64, 'b') + "\"", runs);
  EXPECT_EQ(different.exit_code, 3) << different.output();

  std::ofstream(folder / "toy_val_000000.bin", std::ios::app | std::ios::binary).write("\0\0", 2);
  const auto resized = run_pinned(dir, "\"" + hash + "\"", runs);
  EXPECT_EQ(resized.exit_code, 3) << resized.output();
  EXPECT_NE(resized.err.find("toy_val_000000.bin"), std::string::npos) << resized.err;
  EXPECT_TRUE(ledgers_under(runs).empty()) << "a refused run wrote " << ledgers_under(runs).front();
}

TEST(DataPinCli, AMatchingFolderRunsAndItsRecordsNameTheLicenceAndHash) {
  TempDir dir("k3lab-data-cli");
  const auto folder = jargon_toy(dir.path());
  const auto written = run_k3lab({"data", "manifest", folder.string(), "--tokenizer", "bytes", "--source",
                                  "fixtures/corpus excerpt", "--licence", "public domain"});
  ASSERT_EQ(written.exit_code, 0) << written.output();
  const auto hash = hash_by_sha256sum(folder / "manifest.json");
  const auto runs = dir.path() / "runs";
  const auto ran = run_pinned(dir, "\"" + hash + "\"", runs);
  ASSERT_EQ(ran.exit_code, 0) << ran.output();
  const auto results = result_records(runs);
  EXPECT_FALSE(results.empty());
  for (const auto& record : results) {
    const auto& dataset = record.at("data").at("dataset");
    EXPECT_EQ(dataset.value("manifest_sha256", ""), hash);
    EXPECT_EQ(dataset.value("licence", ""), "public domain");
  }
}

// `k3lab run situ-qat --profile smoke` with parameters.downstream.sha256 set to `pin` (JSON for --set).
ProcessResult run_downstream_pinned(const std::string& pin, const std::filesystem::path& runs) {
  return run_k3lab({"run", "situ-qat", "--profile", "smoke", "--unfrozen", "--device", "cpu", "--threads", "1", "--set",
                    "downstream.sha256=" + pin, "--out", runs.string()},
                   with_repository_protocols());
}

// The downstream suite is pinned like the data: refused before the first unit when the protocol pins
// nothing or another suite (exit 3, the hash to pin named), scored and recorded when it matches.
TEST(DownstreamPinCli, RunRefusesAnUnpinnedOrDifferentSuiteAndScoresThePinnedOne) {
  TempDir dir("k3lab-downstream-cli");
  const auto runs = dir.path() / "runs";
  const std::string items_sha256 = "cd07bead28ed689ae3632efc77cef655124ab325469f1cae1dad11e9f886bd11";
  const auto unpinned = run_downstream_pinned("null", runs);
  EXPECT_EQ(unpinned.exit_code, 3) << unpinned.output();
  EXPECT_NE(unpinned.err.find(items_sha256), std::string::npos) << unpinned.err;
  EXPECT_NE(unpinned.err.find("k3lab freeze"), std::string::npos) << unpinned.err;
  const auto different = run_downstream_pinned("\"" + std::string(64, 'b') + "\"", runs);
  EXPECT_EQ(different.exit_code, 3) << different.output();
  EXPECT_NE(different.err.find("parameters.downstream.sha256"), std::string::npos) << different.err;
  EXPECT_TRUE(ledgers_under(runs).empty());

  const auto ran = run_downstream_pinned("\"" + items_sha256 + "\"", runs);
  ASSERT_EQ(ran.exit_code, 0) << ran.output();
  const auto results = result_records(runs);
  EXPECT_FALSE(results.empty());
  for (const auto& record : results) {
    const auto& quality = record.at("data").at("downstream_task_quality");
    EXPECT_TRUE(quality.at("measured").get<bool>());
    EXPECT_EQ(quality.at("suite").at("items_sha256"), items_sha256);
    EXPECT_EQ(quality.at("points").size(), 2u);  // at_tokens [256, 512]
    EXPECT_EQ(quality.at("final").at("items"), 138);
    EXPECT_EQ(quality.at("final").at("chance"), 0.25);
  }
}

// context-probe's pinned repository (python3-sympy): a missing package or file is exit 1 with the install
// command, another version or hash list is exit 3; both before any call, with nothing recorded.
TEST(RepositoryPinCli, RunRefusesAMissingOrDifferentRepositoryBeforeAnyCall) {
  if (!std::filesystem::exists("/usr/lib/python3/dist-packages/sympy/__init__.py")) {
    GTEST_SKIP() << "python3-sympy is not installed (scripts/setup.sh installs it)";
  }
  TempDir dir("k3lab-repository-cli");
  const auto runs = dir.path() / "runs";
  const auto run_with = [&](const std::string& set) {
    return run_k3lab({"run", "context-probe", "--profile", "smoke", "--unfrozen", "--out", runs.string(), "--set", set},
                     with_repository_protocols());
  };
  const auto missing = run_with("repository.root=\"" + (dir.path() / "nowhere").string() + "\"");
  EXPECT_EQ(missing.exit_code, 1) << missing.output();
  EXPECT_NE(missing.err.find("apt-get install python3-sympy=1.11.1-1"), std::string::npos) << missing.err;
  const auto other_version = run_with("repository.version=\"1.12-1\"");
  EXPECT_EQ(other_version.exit_code, 3) << other_version.output();
  EXPECT_NE(other_version.err.find("1.11.1-1 is installed"), std::string::npos) << other_version.err;
  const auto other_list = run_with("repository.files_sha256=\"" + std::string(64, 'b') + "\"");
  EXPECT_EQ(other_list.exit_code, 3) << other_list.output();
  EXPECT_NE(other_list.err.find("differs from the one the protocol froze"), std::string::npos) << other_list.err;
  EXPECT_TRUE(ledgers_under(runs).empty()) << "a refused run wrote " << ledgers_under(runs).front();

  // Without the repository family the pin is not needed.
  const auto without = run_k3lab({"run", "context-probe", "--profile", "smoke", "--unfrozen", "--out", runs.string(),
                                  "--set", "families=[\"single\"]", "--set",
                                  "repository.root=\"" + (dir.path() / "nowhere").string() + "\""},
                                 with_repository_protocols());
  EXPECT_EQ(without.exit_code, 0) << without.output();
}

}  // namespace
}  // namespace k3lab::testing
