// attn-res's runner: every arm's model builds at the smoke shape (and the full shape validates), the
// controlled variables are identical across arms, the depth probe at initialisation gives the
// values zero pseudo-queries imply, and a killed unit resumes to the same result.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include <torch/torch.h>

#include "attn_res/arm_model.hpp"
#include "attn_res/depth_probe.hpp"
#include "attn_res/parameters.hpp"
#include "attn_res/residual_memory.hpp"
#include "attn_res/run_unit.hpp"
#include "attn_res/units.hpp"
#include "attn_res_protocol.hpp"
#include "k3lab/core/protocol.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/models/param_count.hpp"

namespace k3lab::experiments::attn_res {
namespace {

using k3lab::testing::TempDir;

using testing::attn_res_protocol;

Parameters smoke() { return parse_parameters(attn_res_protocol().parameters_for("smoke")); }

TEST(ArmModels, EveryArmBuildsAtTheSmokeShape) {
  const auto p = smoke();
  const std::int64_t L = p.model.n_layers, D = p.model.d_model;
  const auto tokens = torch::arange(16, torch::kInt64).reshape({2, 8});  // (B, T)
  for (const auto& arm : arm_ids()) {
    const auto config = arm_model_config(p, arm);
    models::DecoderLM model(config, 4101);
    EXPECT_EQ(models::parameter_count(*model), models::count_parameters(config)) << arm;
    EXPECT_EQ(model->forward(tokens).sizes(), (std::vector<std::int64_t>{2, 8, p.model.vocab_size})) << arm;
    EXPECT_EQ(config.num_layers(), L);
    EXPECT_EQ(config.hidden_size, D);
    const auto attnres = models::parameter_breakdown(config).residual;
    // AttnRes adds one pseudo-query and one key-norm gain of width D per aggregation (2L + 1).
    EXPECT_EQ(attnres, arm == "ordinary-residual" ? 0 : 2 * (2 * L + 1) * D) << arm;
  }
  EXPECT_EQ(arm_model_config(p, "ordinary-residual").residual.mode, models::ResidualMode::Standard);
  EXPECT_EQ(arm_model_config(p, "full-attnres").residual.mode, models::ResidualMode::FullAttnRes);
  EXPECT_EQ(arm_model_config(p, "block-attnres").residual.mode, models::ResidualMode::BlockAttnRes);
  EXPECT_EQ(arm_model_config(p, "block-attnres").residual.block_size, p.attnres_block_layers);
  EXPECT_THROW(arm_model_config(p, "mhc"), std::invalid_argument);
}

TEST(ArmModels, TheFullShapeValidatesAndDiffersOnlyInTheResidualPath) {
  const auto p = parse_parameters(attn_res_protocol().parameters_for("full"));
  nlohmann::json reference;
  for (const auto& arm : arm_ids()) {
    nlohmann::json j = arm_model_config(p, arm);  // validate() ran inside
    EXPECT_EQ(j.at("schedule").get<std::string>().size(), 36u);
    j.erase("residual");
    if (reference.is_null()) reference = j;
    EXPECT_EQ(j, reference) << arm;
  }
}

TEST(TrainerSetup, ControlledVariablesAreIdenticalAcrossArms) {
  const auto p = parse_parameters(attn_res_protocol().parameters_for("full"));
  nlohmann::json reference;
  for (const auto& arm : arm_ids()) {
    auto j = trainer_config(p, arm, 4101, nlohmann::json::object(), "").to_json();
    j.erase("model");
    if (reference.is_null()) reference = j;
    EXPECT_EQ(j, reference) << arm;
  }
  EXPECT_EQ(reference.at("order_seed"), 4001);
  EXPECT_EQ(reference.at("token_budget"), 1000000000);
  EXPECT_EQ(reference.at("init_seed"), 4101);
  EXPECT_EQ(unit_checkpoint_dir("/runs/x/artifacts", "arm=full-attnres/seed=4101"),
            std::filesystem::path("/runs/x/artifacts/checkpoints/arm=full-attnres_seed=4101"));
}

struct ProbeRun {
  nlohmann::json probes;
  bool grads_untouched = true;
};

ProbeRun probe_fresh_model(const std::string& arm, bool random_queries) {
  const auto p = smoke();
  const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, "unused"});
  models::DecoderLM model(arm_model_config(p, arm), 4101);
  if (random_queries) {
    torch::NoGradGuard no_grad;
    auto* path = dynamic_cast<models::AttnResidualImpl*>(model->residual.get());
    torch::manual_seed(3);
    path->queries.copy_(torch::randn_like(path->queries));
  }
  model->eval();
  const DepthProbe probe(p, data, 2);
  ProbeRun run;
  run.probes = probe.evaluate(model, torch::Device(torch::kCPU));
  for (const auto& parameter : model->parameters()) run.grads_untouched = run.grads_untouched && !parameter.grad().defined();
  return run;
}

TEST(DepthProbe, ZeroPseudoQueriesGiveUniformWeightsOverTheExpectedSources) {
  const auto p = smoke();
  const std::int64_t L = p.model.n_layers;
  for (const std::string arm : {"full-attnres", "block-attnres"}) {
    const auto run = probe_fresh_model(arm, false);
    EXPECT_TRUE(run.grads_untouched) << arm;
    const auto& depth = run.probes.at("depth_attention");
    ASSERT_FALSE(depth.is_null()) << arm;
    const auto& aggregations = depth.at("aggregations");
    ASSERT_EQ(aggregations.size(), static_cast<std::size_t>(2 * L + 1)) << arm;
    for (const auto& a : aggregations) {
      const auto n = a.at("sources").get<double>();
      EXPECT_NEAR(a.at("entropy").get<double>(), std::log(n), 1e-5) << arm << " " << a.dump();
      EXPECT_DOUBLE_EQ(a.at("diversity").get<double>(), 0.0) << arm;
      EXPECT_NEAR(a.at("recent_weight").get<double>(), 1.0 / n, 1e-6) << arm;
    }
    if (arm == "full-attnres") {
      for (std::size_t c = 0; c < aggregations.size(); ++c) EXPECT_EQ(aggregations[c].at("sources"), c + 1);
    }
    // The probe's peak source count is the stored-residual formula's.
    const auto mode = arm_model_config(p, arm).residual.mode;
    EXPECT_EQ(aggregations.back().at("sources").get<std::int64_t>(),
              stored_residual_sources(mode, L, p.attnres_block_layers)) << arm;
    const auto& summary = depth.at("summary");
    EXPECT_NEAR(summary.at("mean_normalised_entropy").get<double>(), 1.0, 1e-5) << arm;
    EXPECT_DOUBLE_EQ(summary.at("collapse_fraction").get<double>(), 0.0) << arm;
    EXPECT_LT(depth.at("max_mix_reconstruction_error").get<double>(), 1e-5) << arm;
  }
  // Block with 2-layer blocks over 6 layers: before layer 0's attention only the embedding.
  const auto block = probe_fresh_model("block-attnres", false).probes.at("depth_attention").at("aggregations");
  EXPECT_EQ(block[0].at("sources"), 1);
  EXPECT_EQ(block[1].at("sources"), 2);  // embedding + partial (layer 0's attention output)
  EXPECT_EQ(block[4].at("sources"), 2);  // layer 2's attention: embedding + block 1 (not yet sealed)
  EXPECT_EQ(block[5].at("sources"), 3);  // embedding + block 1 + partial
}

TEST(DepthProbe, LearnedQueriesAreReproducedAndGradientsCoverEverySublayer) {
  const auto p = smoke();
  for (const std::string arm : {"full-attnres", "block-attnres"}) {
    const auto run = probe_fresh_model(arm, true);
    const auto& depth = run.probes.at("depth_attention");
    EXPECT_LT(depth.at("max_mix_reconstruction_error").get<double>(), 1e-4) << arm;
    EXPECT_GT(depth.at("summary").at("mean_diversity").get<double>(), 0.0) << arm;  // tokens now disagree
  }
  const auto ordinary = probe_fresh_model("ordinary-residual", false);
  EXPECT_TRUE(ordinary.probes.at("depth_attention").is_null());
  const auto& sublayers = ordinary.probes.at("gradient_norm_by_depth").at("sublayers");
  ASSERT_EQ(sublayers.size(), static_cast<std::size_t>(2 * p.model.n_layers));
  for (const auto& s : sublayers) {
    EXPECT_GT(s.at("grad_norm").get<double>(), 0.0) << s.dump();
    EXPECT_TRUE(std::isfinite(s.at("grad_norm").get<double>()));
  }
  EXPECT_EQ(sublayers[3].at("kind"), "mlp");
  EXPECT_EQ(sublayers[3].at("layer"), 1);
  EXPECT_TRUE(ordinary.probes.at("gradient_norm_by_depth").at("other").contains("embed"));
  EXPECT_EQ(ordinary.probes.at("probe_batch").at("rows"), 2);
  EXPECT_EQ(probe_rows(p, 8), 2);  // never more than the validation set's windows (128 / 64)
  EXPECT_EQ(probe_rows(p, 1), 1);
}

struct UnitRun {
  UnitOutcome outcome;
  std::vector<nlohmann::json> notes;
};

UnitRun run_one(const std::filesystem::path& run_dir, double stop_at, std::atomic<bool>* stop) {
  const auto parameters = attn_res_protocol().parameters_for("smoke");
  const auto units = enumerate_units(parse_parameters(parameters));
  const auto& unit = units.at(2);  // the block arm of the first seed
  UnitRun run;
  RunEnv env{attn_res_protocol(), parameters, "smoke", run_dir, run_dir / "artifacts", false,
             nlohmann::json{{"device", "cpu"}, {"threads", 1}}, nullptr, nullptr, stop};
  env.note = [&](const std::string&, nlohmann::json record) { run.notes.push_back(std::move(record)); };
  env.progress = [&](double fraction) {
    if (stop && fraction >= stop_at) stop->store(true);
  };
  run.outcome = make_experiment()->run_unit(unit, env);
  return run;
}

TEST(RunUnit, TrainsToTheBudgetAndAKilledUnitResumesToTheSameResult) {
  TempDir straight("k3lab-attn-res-straight"), killed("k3lab-attn-res-killed");
  const auto uninterrupted = run_one(straight.path(), 0, nullptr);
  ASSERT_EQ(uninterrupted.outcome.kind, UnitOutcome::Kind::Result) << uninterrupted.outcome.detail;
  const auto& data = uninterrupted.outcome.data;
  EXPECT_EQ(data.at("arm"), "block-attnres");
  EXPECT_EQ(data.at("training").at("tokens"), 512);
  EXPECT_EQ(data.at("training").at("evaluations").size(), 2u);
  EXPECT_EQ(uninterrupted.notes.size(), 2u);
  EXPECT_EQ(data.at("stored_residual_memory").at("sources"), 4);
  const auto& downstream = data.at("downstream_task_quality");  // the smoke profile's suite at 256 and 512 tokens
  EXPECT_TRUE(downstream.at("measured").get<bool>());
  EXPECT_EQ(downstream.at("points").size(), 2u);
  EXPECT_EQ(downstream.at("final").at("tokens"), 512);
  EXPECT_EQ(downstream.at("final").at("items"), 138);
  EXPECT_GT(data.at("attnres_parameters").get<std::int64_t>(), 0);
  EXPECT_TRUE(uninterrupted.outcome.timing.at("training").contains("train_tokens_per_s"));

  std::atomic<bool> stop{false};
  EXPECT_THROW(run_one(killed.path(), 0.75, &stop), std::runtime_error);  // stops after step 3 of 4
  EXPECT_TRUE(std::filesystem::exists(killed.path() / "artifacts/checkpoints" /
                                      ("arm=block-attnres_seed=" + std::to_string(smoke().seeds[0])) / "latest.json"));
  stop.store(false);
  const auto resumed = run_one(killed.path(), 2.0, &stop);
  ASSERT_EQ(resumed.outcome.kind, UnitOutcome::Kind::Result) << resumed.outcome.detail;
  EXPECT_EQ(resumed.outcome.data, uninterrupted.outcome.data);
}

TEST(RunUnit, MissingDatasetIsAFailureThatStopsTheWindow) {
  TempDir run_dir("k3lab-attn-res-nodata");
  auto parameters = attn_res_protocol().parameters_for("smoke");
  parameters["data"]["dataset"] = "fineweb-edu-sample-10BT";
  parameters["data"]["tokenizer"] = "gpt2";
  parameters.erase("downstream");  // the byte suite needs byte tokens; this test is about the data
  const auto units = enumerate_units(parse_parameters(parameters));
  RunEnv env{attn_res_protocol(), parameters, "smoke", run_dir.path(), run_dir.path() / "artifacts", false,
             nlohmann::json{{"device", "cpu"}, {"data_dir", run_dir.path().string()}}, nullptr, nullptr, nullptr};
  const auto experiment = make_experiment();
  EXPECT_TRUE(experiment->preflight(parameters, env.options).has_value());
  const auto outcome = experiment->run_unit(units.at(0), env);
  ASSERT_EQ(outcome.kind, UnitOutcome::Kind::Failure);
  EXPECT_EQ(outcome.reason, kDataUnavailable);
  const nlohmann::json record = {{"kind", "failure"}, {"reason", outcome.reason}, {"detail", outcome.detail}};
  EXPECT_TRUE(experiment->check_window(attn_res_protocol(), parameters, {record}).stop);
  EXPECT_FALSE(experiment->check_window(attn_res_protocol(), parameters, {{{"kind", "failure"}, {"reason", "oom"}}}).stop);
  EXPECT_FALSE(experiment->preflight(attn_res_protocol().parameters_for("smoke"), nlohmann::json{{"device", "cpu"}}).has_value());
}

}  // namespace
}  // namespace k3lab::experiments::attn_res
