// The checkpoint protocol (docs/reliability.md, "Checkpoints"): the two newest complete checkpoints are
// kept, an unfinished save is never loaded, and a torn or unreadable checkpoint falls back to the one
// before it (or to step 0) with a note, ending in the same run as an uninterrupted one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "k3lab/train/trainer.hpp"
#include "test_support.hpp"
#include "tiny_training.hpp"

namespace k3lab::train {
namespace {

namespace fs = std::filesystem;
using testing::corpus;
using testing::TempDir;

// 8 steps, a checkpoint after every second one (steps 2, 4, 6, 8).
TrainerConfig eight_step_config() {
  auto c = testing::tiny_config();
  c.token_budget = 256;
  return c;
}

const LmTrainResult& uninterrupted() {
  static const LmTrainResult r = train(eight_step_config(), corpus());
  return r;
}

// Trains until the kill after step 7: the checkpoints of steps 4 and 6 are on disk.
TrainerConfig killed_after_step_seven(const fs::path& dir) {
  auto config = eight_step_config();
  config.checkpoint_dir = dir;
  TrainerHooks crash;
  crash.crash_after_step = [](std::int64_t step) { return step == 7; };
  const auto killed = train(config, corpus(), crash);
  EXPECT_EQ(killed.status, TrainResult::Status::Interrupted);
  return config;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void tear(const fs::path& file) { fs::resize_file(file, fs::file_size(file) / 2); }

void expect_same_run_as_uninterrupted(const LmTrainResult& resumed) {
  ASSERT_EQ(resumed.status, TrainResult::Status::Completed) << resumed.detail;
  EXPECT_EQ(resumed.state.losses, uninterrupted().state.losses);  // bitwise
  EXPECT_EQ(resumed.state.evaluations, uninterrupted().state.evaluations);
  for (std::size_t i = 0; i < resumed.model->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(resumed.model->parameters()[i], uninterrupted().model->parameters()[i]));
  }
}

TEST(Checkpoint, KeepsTheTwoNewestCompleteOnesAndNamesThemInLatest) {
  TempDir dir("keep");
  killed_after_step_seven(dir.path);
  // Saved at steps 2, 4, 6 as ckpt-0, ckpt-1, ckpt-2: the oldest is gone, no temporary is left.
  EXPECT_EQ(entries(dir.path), (std::vector<std::string>{"ckpt-1", "ckpt-2", "latest.json"}));
  const auto latest = read_json(dir.path / "latest.json");
  EXPECT_EQ(latest["folder"], "ckpt-2");
  EXPECT_EQ(latest["previous"], "ckpt-1");
  EXPECT_EQ(latest["step"], 6);
  EXPECT_EQ(read_json(dir.path / "ckpt-1" / "state.json")["step"], 4);
}

TEST(Checkpoint, ATornNewestCheckpointFallsBackToThePreviousOneWithANote) {
  TempDir dir("torn");
  auto config = killed_after_step_seven(dir.path);
  tear(dir.path / "ckpt-2" / "model.pt");
  std::vector<nlohmann::json> noted;
  TrainerHooks hooks;
  hooks.on_checkpoint_note = [&](const nlohmann::json& note) { noted.push_back(note); };
  const auto resumed = train(config, corpus(), hooks);
  ASSERT_TRUE(resumed.resumed_from_step.has_value());
  EXPECT_EQ(*resumed.resumed_from_step, 4);
  ASSERT_EQ(noted.size(), 1u);
  EXPECT_EQ(noted[0]["checkpoint"], "ckpt-2");
  EXPECT_EQ(noted[0]["action"], "resumed from ckpt-1 (step 4)");
  EXPECT_FALSE(noted[0]["error"].get<std::string>().empty());
  EXPECT_EQ(resumed.checkpoint_notes, noted);
  expect_same_run_as_uninterrupted(resumed);
}

TEST(Checkpoint, WhenNoCheckpointLoadsTheUnitRestartsFromStepZero) {
  TempDir dir("none");
  auto config = killed_after_step_seven(dir.path);
  tear(dir.path / "ckpt-2" / "optimizer.pt");
  fs::remove(dir.path / "ckpt-1" / "state.json");
  const auto resumed = train(config, corpus());
  EXPECT_FALSE(resumed.resumed_from_step.has_value());
  ASSERT_EQ(resumed.checkpoint_notes.size(), 2u);
  for (const auto& note : resumed.checkpoint_notes) {
    EXPECT_EQ(note["action"], "no checkpoint loads: the unit restarts from step 0");
  }
  expect_same_run_as_uninterrupted(resumed);
}

TEST(Checkpoint, AnUnreadableLatestJsonFindsTheNewestCompleteFolder) {
  TempDir dir("latest");
  auto config = killed_after_step_seven(dir.path);
  std::ofstream(dir.path / "latest.json") << "{\"folder\": ";
  const auto resumed = train(config, corpus());
  ASSERT_TRUE(resumed.resumed_from_step.has_value());
  EXPECT_EQ(*resumed.resumed_from_step, 6);
  ASSERT_EQ(resumed.checkpoint_notes.size(), 1u);
  EXPECT_EQ(resumed.checkpoint_notes[0]["checkpoint"], "latest.json");
  expect_same_run_as_uninterrupted(resumed);
}

TEST(Checkpoint, AnUnfinishedSaveIsNeverLoadedAndIsCleanedUp) {
  TempDir dir("partial");
  auto config = killed_after_step_seven(dir.path);
  // A kill during a save leaves its temporary folder with whatever was written.
  fs::create_directory(dir.path / ".ckpt-9.partial");
  fs::copy_file(dir.path / "ckpt-2" / "model.pt", dir.path / ".ckpt-9.partial" / "model.pt");
  const auto resumed = train(config, corpus());
  EXPECT_EQ(*resumed.resumed_from_step, 6);
  EXPECT_TRUE(resumed.checkpoint_notes.empty());
  expect_same_run_as_uninterrupted(resumed);
  EXPECT_FALSE(fs::exists(dir.path / ".ckpt-9.partial"));
}

}  // namespace
}  // namespace k3lab::train
