// The long-context probes' checkpoint subset (protocol field long_context_eval.checkpoint_examples):
// which examples an evaluation before the last scores, that the last one scores every example, and
// the protocol check on the field.
#include <gtest/gtest.h>

#include "hybrid_attention/arm_model.hpp"
#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/probes.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

nlohmann::json smoke_parameters(const nlohmann::json& long_context_eval) {
  static const core::Protocol protocol = core::load_protocol(
      std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/hybrid-attention.json", &parameter_schema());
  auto parameters = protocol.parameters_for("smoke");
  parameters["long_context_eval"] = long_context_eval;
  return parameters;
}

TEST(EvenlySpaced, PicksEvenlySpacedIndicesFromZero) {
  EXPECT_EQ(evenly_spaced(100, 6), (std::vector<std::size_t>{0, 16, 33, 50, 66, 83}));
  EXPECT_EQ(evenly_spaced(4, 2), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(evenly_spaced(3, 5), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(evenly_spaced(0, 3).empty());
}

TEST(CheckpointExamples, OutsideOneToExamplesPerLengthIsRefused) {
  for (const int bad : {0, 3}) {
    try {
      parse_parameters(smoke_parameters({{"lengths", {64, 128}}, {"examples_per_length", 2}, {"checkpoint_examples", bad}}));
      ADD_FAILURE() << "checkpoint_examples " << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("long_context_eval.checkpoint_examples"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(
      parse_parameters(smoke_parameters({{"lengths", {64}}, {"examples_per_length", 2}, {"checkpoint_examples", "one"}})),
      std::invalid_argument);
  const auto unset = parse_parameters(
      smoke_parameters({{"lengths", {64, 128}}, {"examples_per_length", 2}, {"checkpoint_examples", nullptr}}));
  EXPECT_FALSE(unset.long_context_checkpoint_examples);
}

TEST(CheckpointExamples, EvaluationsBeforeTheLastScoreTheSubsetAndTheLastScoresAll) {
  const auto subset = parse_parameters(
      smoke_parameters({{"lengths", {64, 128}}, {"examples_per_length", 4}, {"checkpoint_examples", 2}}));
  const auto whole = parse_parameters(
      smoke_parameters({{"lengths", {64, 128}}, {"examples_per_length", 4}, {"checkpoint_examples", 4}}));
  const auto data = train::load_dataset({.id = subset.dataset, .tokenizer = subset.tokenizer,
                                         .vocab_size = subset.model.vocab_size, .data_root = "unused"});
  models::DecoderLM model(arm_model_config(subset, "hybrid-3kda-1mla"), /*init_seed=*/7);
  const torch::Device cpu(torch::kCPU);

  const LongContextProbes probes(subset, data);
  const auto checkpoint = probes.evaluate(model, cpu, /*final=*/false);
  const auto last = probes.evaluate(model, cpu, /*final=*/true);
  EXPECT_EQ(checkpoint.at("examples_per_length"), 2);
  EXPECT_EQ(last.at("examples_per_length"), 4);
  EXPECT_EQ(checkpoint.at("loss_by_position").at("rows"), 2);
  EXPECT_EQ(last.at("loss_by_position").at("rows"), 4);
  for (std::size_t i = 0; i < 2; ++i) {
    for (const char* task : {"mqar", "needle"}) {
      // Every example of a length asks the same number of queries.
      EXPECT_EQ(2 * checkpoint.at("retrieval")[i].at(task).at("queries").get<int>(),
                last.at("retrieval")[i].at(task).at("queries").get<int>())
          << task;
    }
  }
  // A subset as large as the set is the whole set: the same record as the last evaluation's.
  const LongContextProbes all(whole, data);
  EXPECT_EQ(all.evaluate(model, cpu, /*final=*/false), last);
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
