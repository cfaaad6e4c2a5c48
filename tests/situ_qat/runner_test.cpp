// situ-qat's runner: both arms build with the smoke shape under the same quantizer, controlled
// variables are identical across arms, unimplemented quantization settings are refused, and the
// activation probe measures a real model without leaving its recorder installed.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <unistd.h>

#include <atomic>

#include "k3lab/core/protocol.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/dataset.hpp"
#include "situ_qat/activation_probe.hpp"
#include "situ_qat/arm_model.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/run_unit.hpp"
#include "situ_qat/units.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

const core::Protocol& protocol() {
  static const core::Protocol p =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  return p;
}

Parameters smoke() { return parse_parameters(protocol().parameters_for("smoke")); }

TEST(ArmModels, BothArmsBuildWithTheSmokeShapeAndTheSameQuantizer) {
  const auto p = smoke();
  std::int64_t count = -1;
  for (const auto& arm : arm_ids()) {
    const auto config = arm_model_config(p, arm);
    EXPECT_EQ(config.ffn.kind, arm == "situ-glu" ? models::FfnKind::SituGlu : models::FfnKind::SwiGlu);
    EXPECT_EQ(config.ffn.quant.weights, models::MxElement::Fp4E2M1);
    EXPECT_EQ(config.ffn.quant.activations, models::MxElement::Fp8E4M3);
    EXPECT_EQ(config.ffn.quant.block_size, 32);
    EXPECT_EQ(config.ffn.intermediate_size, p.model.ffn_hidden);
    EXPECT_EQ(config.schedule, std::string(static_cast<std::size_t>(p.model.n_layers), 'A'));
    models::DecoderLM model(config, 6101);
    EXPECT_EQ(models::parameter_count(*model), models::count_parameters(config));
    if (count >= 0) {
      EXPECT_EQ(models::count_parameters(config), count) << "the arms differ in size";
    }
    count = models::count_parameters(config);
    const auto logits = model->forward(torch::randint(0, p.model.vocab_size, {2, 16}, torch::kLong));
    EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 16, p.model.vocab_size}));
    EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  }
}

TEST(ArmModels, TheFullShapeIsValidToo) {
  const auto p = parse_parameters(protocol().parameters_for("full"));
  for (const auto& arm : arm_ids()) EXPECT_NO_THROW(arm_model_config(p, arm)) << arm;
}

TEST(TrainerSetup, ControlledVariablesAreIdenticalAcrossArms) {
  const auto p = parse_parameters(protocol().parameters_for("full"));
  nlohmann::json reference;
  for (const auto& arm : arm_ids()) {
    auto j = trainer_config(p, arm, 6101, nlohmann::json::object(), "").to_json();
    j["model"]["ffn"].erase("kind");
    if (reference.is_null()) reference = j;
    EXPECT_EQ(j, reference) << arm;
  }
  EXPECT_EQ(reference.at("order_seed"), 6001);
  EXPECT_EQ(reference.at("token_budget"), 500000000);
  EXPECT_EQ(reference.at("init_seed"), 6101);
}

TEST(TrainerSetup, BothArmsStartFromTheSameWeights) {
  const auto p = smoke();
  models::DecoderLM a(arm_model_config(p, "swiglu"), 6101), b(arm_model_config(p, "situ-glu"), 6101);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
}

TEST(Quantization, SettingsFakeQuantDoesNotImplementAreRefusedWithTheFix) {
  auto p = smoke();
  EXPECT_EQ(runner_problem(p), std::nullopt);
  p.quantization.scale_rounding = "rceil";
  const auto problem = runner_problem(p);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("scale_rounding"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("floor"), std::string::npos) << *problem;
  p = smoke();
  p.quantization.element_rounding = "nearest-away";
  EXPECT_THROW(quant_config(p.quantization), std::invalid_argument);
}

TEST(TrainerSetup, CheckpointFolderNamesTheUnit) {
  EXPECT_EQ(unit_checkpoint_dir("/r/artifacts", "arm=situ-glu/seed=6101"),
            std::filesystem::path("/r/artifacts/checkpoints/arm=situ-glu_seed=6101"));
  EXPECT_TRUE(unit_checkpoint_dir("", "arm=swiglu/seed=1").empty());
}

TEST(ActivationProbe, MeasuresBothTensorsAndRestoresTheQuantizers) {
  const auto p = smoke();
  const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, "unused"});
  const ActivationProbe probe(p, data);
  for (const auto& arm : arm_ids()) {
    models::DecoderLM model(arm_model_config(p, arm), 6101);
    model->eval();
    const auto* before = model->blocks[0]->as<models::DecoderBlockImpl>()->ffn->fake_quantizer().get();
    const auto j = probe.measure(model, torch::Device(torch::kCPU));
    EXPECT_EQ(model->blocks[0]->as<models::DecoderBlockImpl>()->ffn->fake_quantizer().get(), before);
    const auto L = static_cast<std::int64_t>(p.model.n_layers);
    EXPECT_EQ(j.at("sample_tokens"), p.histogram_sample_tokens);
    EXPECT_EQ(j.at("hidden").at("values"), p.histogram_sample_tokens * p.model.ffn_hidden * L);
    EXPECT_EQ(j.at("inputs").at("values"), p.histogram_sample_tokens * p.model.d_model * L);
    EXPECT_EQ(j.at("hidden").at("per_layer").size(), static_cast<std::size_t>(L));
    for (const char* tensor : {"hidden", "inputs"}) {
      const auto& t = j.at(tensor);
      EXPECT_GT(t.at("p99").get<double>(), 0) << tensor;
      EXPECT_LE(t.at("p99").get<double>(), t.at("p999").get<double>()) << tensor;
      EXPECT_LE(t.at("p999").get<double>(), t.at("max").get<double>()) << tensor;
      const auto& h = t.at("histogram");
      std::int64_t total = h.at("zero").get<std::int64_t>() + h.at("underflow").get<std::int64_t>() +
                           h.at("overflow").get<std::int64_t>() + h.at("non_finite").get<std::int64_t>();
      for (const auto& c : h.at("counts")) total += c.get<std::int64_t>();
      EXPECT_EQ(total, t.at("values").get<std::int64_t>()) << tensor;
    }
    for (const char* e : {"weights", "inputs", "hidden", "outputs"}) {
      const double v = j.at("quantization_error").at(e).get<double>();
      EXPECT_GT(v, 0) << e;
      EXPECT_LT(v, 0.5) << e;  // MX error of a well-scaled tensor is a few percent
    }
    const double s = j.at("saturation").at("both").get<double>();
    EXPECT_GE(s, 0);
    EXPECT_LE(s, 1);
    if (arm == "situ-glu") {
      EXPECT_LE(j.at("hidden").at("max").get<double>(), p.beta1 * p.beta2);
    }
  }
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat

namespace k3lab::experiments::situ_qat {
namespace {

struct UnitRun {
  core::Protocol protocol_copy = protocol();
  nlohmann::json parameters = protocol().parameters_for("smoke");
  std::atomic<bool> stop{false};
  RunEnv env{protocol_copy, parameters, "smoke", {}, {}, false, {{"device", "cpu"}}, {}, {}, &stop, nullptr};
  Unit unit = enumerate_units(parse_parameters(parameters)).at(1);  // situ-glu, first seed
};

TEST(RunUnit, IsDeterministicAndRecordsTheProtocolsSpikesAndDownstreamSuite) {
  UnitRun a, b;
  const auto first = run_training_unit(a.unit, a.env);
  const auto second = run_training_unit(b.unit, b.env);
  ASSERT_EQ(first.kind, UnitOutcome::Kind::Result) << first.detail;
  EXPECT_EQ(first.data, second.data);
  EXPECT_EQ(first.data.at("ffn_kind"), "situ_glu");
  EXPECT_EQ(first.data.at("loss_spikes").at("threshold_sigma"), 5.0);
  const auto& downstream = first.data.at("downstream_task_quality");
  EXPECT_TRUE(downstream.at("measured").get<bool>());
  EXPECT_EQ(downstream.at("suite").at("suite"), "builtin-tiny-next-passage");
  EXPECT_EQ(downstream.at("final").at("chance"), 0.25);
}

TEST(RunUnit, AnInterruptedUnitResumesFromItsCheckpointToTheSameResult) {
  const auto dir = std::filesystem::temp_directory_path() / ("k3lab-situ-qat-resume-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  UnitRun reference, interrupted, resumed;
  const auto expected = run_training_unit(reference.unit, reference.env);
  interrupted.env.artifacts_dir = dir;
  interrupted.env.progress = [&](double fraction) {
    if (fraction >= 0.75) interrupted.stop = true;  // after step 3 of 4: between the two activation checkpoints
  };
  EXPECT_THROW(run_training_unit(interrupted.unit, interrupted.env), std::runtime_error);
  EXPECT_TRUE(std::filesystem::exists(unit_checkpoint_dir(dir, interrupted.unit.id) / "latest.json"));
  resumed.env.artifacts_dir = dir;
  const auto outcome = run_training_unit(resumed.unit, resumed.env);
  ASSERT_EQ(outcome.kind, UnitOutcome::Kind::Result) << outcome.detail;
  EXPECT_EQ(outcome.data, expected.data);
  std::filesystem::remove_all(dir);
}

TEST(RunUnit, AStopRequestLeavesTheUnitOpen) {
  UnitRun run;
  run.stop = true;
  EXPECT_THROW(run_training_unit(run.unit, run.env), std::runtime_error);
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat
