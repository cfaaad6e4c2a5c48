#pragma once
// What the end-to-end tests of the k3lab binary share: the table of experiments, a hermetic
// environment for the child process, and the committed report fixtures (fixtures/reports/<id>/).
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "common/k3lab_process.hpp"

namespace k3lab::testing {

struct SmokeExperiment {
  std::string id;
  int exit_code = 0;  // what `k3lab run <id> --profile smoke --device cpu` exits with
};

// Every experiment, with what its smoke run is expected to do.
const std::vector<SmokeExperiment>& smoke_experiments();
// Names the case in gtest's messages.
void PrintTo(const SmokeExperiment& experiment, std::ostream* out);

// For gtest's parameterised names: "attn-res" -> "attn_res".
std::string test_name(const std::string& id);

// The child runs in `cwd` with the repository's protocols, the thread counts the fixtures were
// recorded with, and no API key or endpoint from the caller's environment (so the API experiments
// use the embedded mock, never a real endpoint).
ProcessOptions hermetic(const std::filesystem::path& cwd);

// run <id> --profile smoke --device cpu --out <runs_root>
std::vector<std::string> smoke_run_arguments(const std::string& id, const std::filesystem::path& runs_root);

// The folder of one experiment's smoke page in a report: <id>-smoke.
std::string page_dir(const std::string& id);

// fixtures/reports/<id>/: run/ (manifest and ledgers recorded by a known build), run-dir-name (the
// run dir's original name, which the page shows), expected/ (the pages that build rendered).
struct ReportFixture {
  std::filesystem::path root;
  std::filesystem::path run() const { return root / "run"; }
  std::filesystem::path expected() const { return root / "expected"; }
  std::string run_dir_name() const;
};
ReportFixture report_fixture(const std::string& id);

// Copies the fixture's run into <runs_root>/<id>/<original name>/ and returns that run dir.
std::filesystem::path install_fixture_run(const std::string& id, const std::filesystem::path& runs_root);

}  // namespace k3lab::testing
