// The repository family on the pinned real repository (python3-sympy, experiments/context-probe.json).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/context_reader.hpp"
#include "k3lab/validate/context_validator.hpp"
#include "k3lab/validate/repo_snapshot.hpp"

namespace k3lab::validate {
namespace {

const std::filesystem::path kSource(K3LAB_SOURCE_DIR);

RepositoryPin protocol_pin() {
  std::ifstream in(kSource / "experiments/context-probe.json");
  return RepositoryPin::from_json(nlohmann::json::parse(in).at("parameters").at("repository"));
}

// The pinned snapshot, loaded and verified once; nullptr when python3-sympy is not installed.
std::shared_ptr<const RepositorySnapshot> pinned_snapshot() {
  static const std::shared_ptr<const RepositorySnapshot> snapshot = []() -> std::shared_ptr<const RepositorySnapshot> {
    const RepositoryPin pin = protocol_pin();
    if (!std::filesystem::exists(std::filesystem::path(pin.root) / "sympy/__init__.py")) return nullptr;
    return load_pinned_repository(pin, kSource / "experiments");
  }();
  return snapshot;
}

ContextFixture fixture(std::uint64_t seed, int index, std::size_t tokens) {
  FixtureRequest request;
  request.seed = seed;
  request.family = FixtureFamily::repository;
  request.index = index;
  request.target_tokens = tokens;
  request.prefix_id = "test-prefix";
  request.repository_snapshot = pinned_snapshot();
  return generate_context_fixture(request);
}

class PinnedRepositoryFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!pinned_snapshot()) GTEST_SKIP() << "python3-sympy is not installed (scripts/setup.sh installs it)";
  }
};

// Each fixture's question, answer and import path, checked by hand against the installed files
// (sed -n '<line>p' /usr/lib/python3/dist-packages/<file>), not by k3lab's analysis.
struct HandChecked {
  int index;
  std::string importer;
  std::string name;
  std::string answer;
  std::vector<std::string> import_path;
};

const std::vector<HandChecked>& hand_checked() {
  static const std::vector<HandChecked> table = {
      // calculus.py:1 `from sympy.assumptions import Predicate`; assumptions/__init__.py:5-7
      // `from .assume import (AppliedPredicate, Predicate, ...)`; assume.py:225 `class Predicate(...)`.
      {0, "sympy/assumptions/predicates/calculus.py", "Predicate", "sympy/assumptions/assume.py:Predicate",
       {"sympy/assumptions/predicates/calculus.py", "sympy/assumptions/__init__.py", "sympy/assumptions/assume.py"}},
      // functions/__init__.py:44 `from sympy.functions.special.spherical_harmonics import Ynm, Ynm_c, Znm`;
      // spherical_harmonics.py:224 `def Ynm_c(n, m, theta, phi):` -> 4 parameters.
      {1, "sympy/functions/__init__.py", "Ynm_c", "4",
       {"sympy/functions/__init__.py", "sympy/functions/special/spherical_harmonics.py"}},
      // matrices/normalforms.py:6-8 `from sympy.polys.matrices.normalforms import (... invariant_factors as
      // _invf, ...)`; polys/matrices/normalforms.py:49 `def invariant_factors(m):`.
      {2, "sympy/matrices/normalforms.py", "_invf", "sympy/polys/matrices/normalforms.py:invariant_factors",
       {"sympy/matrices/normalforms.py", "sympy/polys/matrices/normalforms.py"}},
      // matrices/__init__.py:25-30 `from .expressions import (... diagonalize_vector, ...)`;
      // expressions/__init__.py:17 `from .diagonal import ... diagonalize_vector`; diagonal.py:219 the def.
      {3, "sympy/matrices/__init__.py", "diagonalize_vector", "sympy/matrices/expressions/diagonal.py:diagonalize_vector",
       {"sympy/matrices/__init__.py", "sympy/matrices/expressions/__init__.py", "sympy/matrices/expressions/diagonal.py"}},
      // intervalmath/__init__.py:2 `from .lib_interval import (... tanh ...)`; lib_interval.py:253 `def tanh(x):`.
      {4, "sympy/plotting/intervalmath/__init__.py", "tanh", "1",
       {"sympy/plotting/intervalmath/__init__.py", "sympy/plotting/intervalmath/lib_interval.py"}},
      // matrices/normalforms.py:6-10 `... hermite_normal_form as _hnf`; polys/matrices/normalforms.py:342
      // `def hermite_normal_form(A, *, D=None, check_rank=False):`.
      {5, "sympy/matrices/normalforms.py", "_hnf", "sympy/polys/matrices/normalforms.py:hermite_normal_form",
       {"sympy/matrices/normalforms.py", "sympy/polys/matrices/normalforms.py"}},
      // parsing/latex/__init__.py:1 `from sympy.external import import_module`; external/__init__.py:18
      // `from sympy.external.importtools import import_module`; importtools.py:48 `def import_module(...)`.
      {6, "sympy/parsing/latex/__init__.py", "import_module", "sympy/external/importtools.py:import_module",
       {"sympy/parsing/latex/__init__.py", "sympy/external/__init__.py", "sympy/external/importtools.py"}},
      // tensor/__init__.py:6 `from .functions import shape`; tensor/functions.py:72 `def shape(expr):`.
      {7, "sympy/tensor/__init__.py", "shape", "1", {"sympy/tensor/__init__.py", "sympy/tensor/functions.py"}},
  };
  return table;
}

std::uint64_t seed_of(int index) { return 1101 + static_cast<std::uint64_t>(index); }  // the protocol's seeds

const SnapshotFile& snapshot_file(const std::string& path) {
  for (const auto& f : pinned_snapshot()->files)
    if (f.path == path) return f;
  throw std::runtime_error(path + " is not in the snapshot");
}

TEST_F(PinnedRepositoryFixture, DerivationsMatchTheHandCheckedTable) {
  for (const HandChecked& want : hand_checked()) {
    const ContextFixture f = fixture(seed_of(want.index), want.index, 15616);
    SCOPED_TRACE(f.id + ": " + f.question);
    EXPECT_EQ(f.question.rfind("In this repository snapshot, the module " + want.importer + " imports the name " +
                                   want.name + ". ",
                               0),
              0u);
    EXPECT_EQ(f.expected_answer, want.answer);
    std::vector<std::string> path;
    for (const auto& step : f.family_details.at("import_path")) path.push_back(step.at("file"));
    EXPECT_EQ(path, want.import_path);
    // The required sections are the whole files of the import path, in derivation order.
    ASSERT_EQ(f.required_evidence.size(), want.import_path.size());
    for (std::size_t k = 0; k < want.import_path.size(); ++k) {
      const SnapshotFile& file = snapshot_file(want.import_path[k]);
      bool whole = false;
      for (const auto& placement : f.placements)
        whole = whole || (placement.evidence_id == f.required_evidence[k] &&
                          placement.text == "FILE: " + file.path + "\n" + file.content);
      EXPECT_TRUE(whole) << file.path << " is not required evidence " << f.required_evidence[k] << " whole";
    }
    EXPECT_LE(f.prompt_tokens, 15616u);
  }
}

TEST_F(PinnedRepositoryFixture, TheReaderAnswersFromThePromptAndAConfusedOneFails) {
  ReaderConfig sharp;
  sharp.base_failure = sharp.max_failure = 0.0;
  ReaderConfig confused;
  confused.base_failure = confused.max_failure = 1.0;
  for (int index = 0; index < 8; ++index) {
    for (std::size_t tokens : {std::size_t{15616}, std::size_t{120000}}) {
      const ContextFixture f = fixture(seed_of(index), index, tokens);
      SCOPED_TRACE(f.id + " at " + std::to_string(tokens));
      const ReaderReply reply = read_fixture_prompt(f.prompt, sharp);
      EXPECT_EQ(reply.family, "repository");
      const ContextVerdict verdict = validate_context_answer(f, reply.text);
      EXPECT_TRUE(verdict.passed) << reply.text;
      EXPECT_DOUBLE_EQ(verdict.evidence.coverage, 1.0) << reply.text;
      EXPECT_FALSE(validate_context_answer(f, read_fixture_prompt(f.prompt, confused).text).passed);
    }
  }
}

TEST_F(PinnedRepositoryFixture, FillerIsWholeRealFilesInThePinnedOrder) {
  const ContextFixture f = fixture(seed_of(3), 3, 300000);
  const auto& files = pinned_snapshot()->files;
  std::set<std::string> evidence;
  for (const auto& p : f.placements) evidence.insert(p.text.substr(6, p.text.find('\n') - 6));
  // Every "FILE: " section header of the prompt, in document order.
  std::vector<std::string> filler;
  for (std::size_t at = f.prompt.find("] FILE: "); at != std::string::npos; at = f.prompt.find("] FILE: ", at + 1)) {
    const std::size_t begin = at + 8;
    const std::string path = f.prompt.substr(begin, f.prompt.find('\n', begin) - begin);
    if (evidence.count(path) == 0) filler.push_back(path);
  }
  ASSERT_GT(filler.size(), 20u);
  // The pinned order, skipping the evidence files: the first filler files are the list's first files.
  std::vector<std::string> expected;
  for (const auto& file : files) {
    if (expected.size() == filler.size()) break;
    if (evidence.count(file.path) == 0) expected.push_back(file.path);
  }
  EXPECT_EQ(filler, expected);
  // Whole files, except the tail section (the last filler file), which is cut at a line end.
  for (std::size_t i = 0; i + 1 < filler.size(); ++i) {
    const SnapshotFile& file = snapshot_file(filler[i]);
    EXPECT_NE(f.prompt.find("] FILE: " + file.path + "\n" + file.content), std::string::npos) << file.path;
  }
  ASSERT_TRUE(f.repository);
  EXPECT_FALSE(f.repository->synthetic);
  EXPECT_EQ(f.repository->license, "BSD-3-Clause");
  EXPECT_EQ(f.repository->snapshot_manifest.at("package"), "python3-sympy");
  EXPECT_EQ(f.repository->file_count, filler.size() + evidence.size());
  EXPECT_LE(f.prompt_tokens, 300000u);
  EXPECT_GE(f.prompt_tokens, 299000u);
}

TEST_F(PinnedRepositoryFixture, FactsDoNotDependOnTheLength) {
  const ContextFixture small = fixture(seed_of(6), 6, 15616);
  const ContextFixture large = fixture(seed_of(6), 6, 250000);
  EXPECT_EQ(small.question, large.question);
  EXPECT_EQ(small.expected_answer, large.expected_answer);
  EXPECT_EQ(small.derivation, large.derivation);
  EXPECT_EQ(small.required_evidence, large.required_evidence);
}

TEST_F(PinnedRepositoryFixture, ABudgetBeyondTheRepositoryIsRefused) {
  try {
    fixture(seed_of(0), 0, kMaxFixtureTargetTokens);
    FAIL() << "the pinned repository holds fewer than 8M estimated tokens";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("used up before the context budget is filled"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace k3lab::validate
