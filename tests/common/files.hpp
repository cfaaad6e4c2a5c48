#pragma once
// Files in tests: whole-file reads, a folder as a map of bytes, the repository's protocols, and
// unified diffs of files and folders for failure messages.
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace k3lab::testing {

// The repository root this suite was built from.
std::filesystem::path source_dir();

// The committed smoke run of experiment `id` (fixtures/reports/<id>/run: manifest and ledger). The
// smoke tests (tests/smoke, ExperimentSmoke) prove it equal to a fresh run of this build apart from
// t, seq, timing, worker and hardware, so a module's smoke test can check its properties without
// training the profile a second time.
std::filesystem::path smoke_fixture_run(const std::string& id);

// The bytes of `file`; throws when it cannot be read.
std::string read_file(const std::filesystem::path& file);

// Every regular file under `root`, keyed by its path relative to `root` ('/'-separated).
std::map<std::string, std::string> read_tree(const std::filesystem::path& root);

// Copies the repository's protocol files (and freeze records) into `dir`/experiments; returns it.
std::filesystem::path copy_protocols(const std::filesystem::path& dir);

// A unified diff (3 lines of context) from `expected` to `actual`, at most `max_lines` lines long;
// empty when they are equal.
std::string unified_diff(const std::string& expected, const std::string& actual, const std::string& expected_name,
                         const std::string& actual_name, std::size_t max_lines = 200);

// Empty when both folders hold the same files with the same bytes; otherwise names the missing and
// the extra files, and gives a unified diff of the first file (by name) whose bytes differ.
// `normalise` (when given) is applied to both sides' bytes first.
std::string tree_difference(const std::filesystem::path& expected, const std::filesystem::path& actual,
                            const std::function<std::string(const std::string&)>& normalise = {});

// The measurement files of a report (every page's tables and charts), which two runs of one design
// share byte for byte: not the pages themselves (provenance: start time, command line) nor the
// wall-time table (timing).
std::map<std::string, std::string> report_measurements(const std::filesystem::path& report_root);

// A page's analysis statement (Markdown or HTML line) replaced by a placeholder: the sources' sha256 in
// it changes with every edit of an analysis source, which golden pages are not meant to track; the
// statement's logic has its own test (docs/verdicts.md, "Analysis version").
std::string mask_analysis_statement(const std::string& page);

}  // namespace k3lab::testing
