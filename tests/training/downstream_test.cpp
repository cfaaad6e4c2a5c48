// The predeclared downstream suite of the proxy experiments (training/downstream.hpp,
// downstream_page.hpp): the protocol block's rules, loading each suite against its pin (the file
// written here byte by byte, independently of the reader), the checkpoint probe, the record a result
// carries, and the page section's means and paired differences against values computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "common/temp_dir.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/experiments/training/downstream.hpp"
#include "k3lab/experiments/training/downstream_page.hpp"
#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/train/builtin_suite.hpp"
#include "k3lab/train/multiple_choice.hpp"
#include "train/tiny_training.hpp"

namespace k3lab::experiments::training {
namespace {

constexpr const char* kBuiltinItemsSha256 = "cd07bead28ed689ae3632efc77cef655124ab325469f1cae1dad11e9f886bd11";

DownstreamSuite builtin_spec() {
  return {train::kBuiltinSuiteId, std::nullopt, kBuiltinItemsSha256, 20261214, "acc_norm", 32, {256, 512}};
}

DownstreamSuite hellaswag_spec(std::optional<std::string> sha256) {
  return {kHellaSwagSuiteId, "hellaswag/hellaswag_val.bin", std::move(sha256), std::nullopt, "acc", 8, {512}};
}

TokenSchedule schedule() {
  TokenSchedule s;
  s.token_budget = 512;
  s.batch_tokens = 128;
  s.sequence_length = 64;
  s.eval_interval_tokens = 256;
  s.validation_tokens = 128;
  return s;
}

Issues check(const DownstreamSuite& spec, const std::string& tokenizer, std::int64_t vocab) {
  DownstreamBlock block{spec};
  DataSource data{"d", tokenizer, 1, std::nullopt};
  Issues issues;
  check_downstream(block, data, vocab, schedule(), issues);
  return issues;
}

bool names(const Issues& issues, const std::string& path, const std::string& words) {
  for (const auto& i : issues) {
    if (i.path == path && i.message.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(DownstreamBlock, TheSmokeAndFullBlocksPassTheirRules) {
  EXPECT_TRUE(check(builtin_spec(), "bytes", 256).empty());
  auto full = hellaswag_spec(std::nullopt);
  EXPECT_TRUE(check(full, "gpt2", 50304).empty());
  EXPECT_TRUE(check(DownstreamSuite{}, "bytes", 256).size() > 0);  // an empty block is not a suite
}

TEST(DownstreamBlock, EachRuleNamesItsFieldAndTheFix) {
  auto s = builtin_spec();
  s.file = "x.bin";
  s.seed = std::nullopt;
  auto issues = check(s, "gpt2", 50304);
  EXPECT_TRUE(names(issues, "parameters.downstream.file", "must be null for the built-in suite"));
  EXPECT_TRUE(names(issues, "parameters.downstream.seed", "generator seed"));
  EXPECT_TRUE(names(issues, "parameters.downstream.suite", "data.tokenizer \"bytes\""));

  auto h = hellaswag_spec("ab");
  h.seed = 3;
  h.file = "../elsewhere.bin";
  issues = check(h, "bytes", 256);
  EXPECT_TRUE(names(issues, "parameters.downstream.seed", "must be null for a file suite"));
  EXPECT_TRUE(names(issues, "parameters.downstream.file", "inside the data root"));
  EXPECT_TRUE(names(issues, "parameters.downstream.suite", "vocab_size >= 50257"));

  auto points = builtin_spec();
  points.at_tokens = {300, 256};
  issues = check(points, "bytes", 256);
  EXPECT_TRUE(names(issues, "parameters.downstream.at_tokens", "300 is not an evaluation point"));
  EXPECT_TRUE(names(issues, "parameters.downstream.at_tokens", "strictly ascending"));
  EXPECT_TRUE(names(issues, "parameters.downstream.at_tokens", "must end at token_budget (512)"));
}

TEST(DownstreamBlock, AbsentMeansNotDeclaredAndTheSchemaReadsEveryField) {
  Fields<DownstreamBlock> fields;
  declare_downstream(fields, "suite");
  const nlohmann::json absent = nlohmann::json::object();
  EXPECT_TRUE(fields.schema()->validate(absent, "parameters").empty());
  DownstreamBlock block;
  fields.read(absent, block);
  EXPECT_FALSE(block.downstream);

  const auto smoke = nlohmann::json::parse(R"({"downstream": {"suite": "builtin-tiny-next-passage", "sha256": "ab",
      "seed": 7, "metric": "acc", "batch_rows": 4, "at_tokens": [256, 512]}})");
  EXPECT_TRUE(fields.schema()->validate(smoke, "parameters").empty());
  fields.read(smoke, block);
  ASSERT_TRUE(block.downstream);
  EXPECT_EQ(block.downstream->seed, 7u);
  EXPECT_FALSE(block.downstream->file);  // absent is null (a profile's null removes the key)
  EXPECT_EQ(block.downstream->at_tokens, (std::vector<std::int64_t>{256, 512}));

  auto bad = smoke;
  bad["downstream"]["metric"] = "f1";
  EXPECT_FALSE(fields.schema()->validate(bad, "parameters").empty());
  bad = smoke;
  bad["downstream"]["seed"] = "seven";
  EXPECT_THROW(fields.read(bad, block), std::invalid_argument);
}

TEST(DownstreamSuiteLoad, TheBuiltinSuiteIsCheckedAgainstItsPinnedItemsHash) {
  const auto suite = load_downstream_suite(builtin_spec(), 256, "/nonexistent");
  EXPECT_EQ(suite.items.size(), 138u);
  EXPECT_EQ(suite.provenance.at("items_sha256"), kBuiltinItemsSha256);
  EXPECT_EQ(suite.provenance.at("chance"), 0.25);
  EXPECT_EQ(suite.provenance.at("items"), 138);

  auto unpinned = builtin_spec();
  unpinned.sha256 = std::nullopt;
  try {
    load_downstream_suite(unpinned, 256, "/nonexistent");
    FAIL() << "an unpinned suite loaded";
  } catch (const core::ProtocolError& e) {  // like an unpinned dataset: the protocol's fault, exit 3
    EXPECT_NE(std::string(e.what()).find(kBuiltinItemsSha256), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("k3lab freeze"), std::string::npos) << e.what();
  }
  auto other = builtin_spec();
  other.seed = 1;  // another generator seed: other items, so the pinned hash refuses them
  EXPECT_THROW(load_downstream_suite(other, 256, "/nonexistent"), core::ProtocolError);
}

// A two-example evaluation file in llm.c's layout: 256 int32 header words, then per example the
// uint16 words delimiter, bytes, index, label, completions, context length, context, and per ending its
// length and tokens.
std::string eval_file() {
  const std::vector<std::vector<std::uint16_t>> examples = {
      {65535, 0, 0, 2, 4, 2, 10, 11, 1, 20, 1, 21, 2, 22, 23, 1, 24},
      {65535, 0, 1, 0, 4, 1, 12, 1, 30, 1, 31, 1, 32, 1, 33},
  };
  std::string body;
  std::int32_t longest = 0;
  for (auto words : examples) {
    words[1] = static_cast<std::uint16_t>(2 * words.size());
    longest = std::max<std::int32_t>(longest, words[1]);
    body.append(reinterpret_cast<const char*>(words.data()), 2 * words.size());
  }
  std::vector<std::int32_t> header(256, 0);
  header[0] = 20240522;
  header[1] = 1;
  header[2] = 2;
  header[3] = longest;
  return std::string(reinterpret_cast<const char*>(header.data()), 4 * header.size()) + body;
}

TEST(DownstreamSuiteLoad, TheHellaSwagFileIsFoundUnderTheDataRootAndCheckedAgainstItsPin) {
  k3lab::testing::TempDir root;
  auto spec = hellaswag_spec(std::string(64, '0'));
  try {
    load_downstream_suite(spec, 50304, root.path());
    FAIL() << "a missing file loaded";
  } catch (const core::ProtocolError&) {
    FAIL() << "a missing file is the machine's problem (exit 1), not the protocol's";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((root / "hellaswag/hellaswag_val.bin").string()), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("docs/downstream.md"), std::string::npos);
  }
  const auto bytes = eval_file();
  root.write("hellaswag/hellaswag_val.bin", bytes);
  const auto sha = core::sha256_hex(bytes);
  EXPECT_THROW(load_downstream_suite(spec, 50304, root.path()), core::ProtocolError);  // another file than pinned
  spec.sha256 = sha;
  const auto suite = load_downstream_suite(spec, 50304, root.path());
  ASSERT_EQ(suite.items.size(), 2u);
  EXPECT_EQ(suite.items[0].label, 2);
  EXPECT_EQ(suite.items[0].endings[2], (std::vector<std::int64_t>{22, 23}));
  EXPECT_EQ(suite.provenance.at("sha256"), sha);
  EXPECT_EQ(suite.provenance.at("items"), 2);
  EXPECT_DOUBLE_EQ(suite.provenance.at("chance").get<double>(), 0.25);
}

// The plan's price of one scoring, against two identities of padded batches: one row a batch costs
// the rows' own lengths; one batch of every row costs rows x the longest row.
TEST(DownstreamPlan, TheBuiltinSuitesTokensPerScoringAreItsPaddedRows) {
  const auto items = load_downstream_suite(builtin_spec(), 256, "/nonexistent").items;
  double own = 0, longest = 0, rows = 0;
  for (const auto& item : items) {
    for (const auto& ending : item.endings) {
      const auto length = static_cast<double>(item.context.size() + ending.size() - 1);
      own += length;
      longest = std::max(longest, length);
      ++rows;
    }
  }
  auto spec = builtin_spec();
  spec.batch_rows = 1;
  EXPECT_DOUBLE_EQ(downstream_tokens_per_scoring(spec, 64), own);
  spec.batch_rows = 100000;
  EXPECT_DOUBLE_EQ(downstream_tokens_per_scoring(spec, 64), rows * longest);
  EXPECT_DOUBLE_EQ(downstream_tokens_per_scoring(spec, 8), rows * 8);  // rows cut to the model's window
  EXPECT_DOUBLE_EQ(downstream_tokens_per_scoring(hellaswag_spec(std::nullopt), 2000), 10042.0 * 4 * 100);

  DownstreamBlock block{builtin_spec()};
  const auto parts = downstream_parts(block, 3, 64);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_DOUBLE_EQ(parts[0].tokens, 3 * 2 * downstream_tokens_per_scoring(builtin_spec(), 64));  // 3 runs, 2 points
  EXPECT_EQ(parts[0].flops_per_token_per_parameter, 2);  // forward only
  EXPECT_TRUE(downstream_parts(DownstreamBlock{}, 3, 64).empty());
}

TEST(DownstreamProbe, ScoresOnlyAtTheProtocolsPointsAndAsTheScorerDoes) {
  const auto spec = builtin_spec();
  DownstreamProbe probe(spec, load_downstream_suite(spec, 256, "/nonexistent"), 256, 64);
  const auto config = train::testing::tiny_model("M");  // one MLA layer, byte vocabulary
  torch::manual_seed(5);
  models::DecoderLM model(config, 5);
  const torch::Device cpu(torch::kCPU);
  train::EvalContext at_128{model, cpu, 128, 1, false};
  EXPECT_FALSE(probe.evaluate(at_128));
  train::EvalContext at_256{model, cpu, 256, 2, false};
  const auto scored = probe.evaluate(at_256);
  ASSERT_TRUE(scored);

  train::MultipleChoiceOptions options{256, 64, 32, cpu};
  const auto direct = train::score_multiple_choice([&](const torch::Tensor& t) { return model->forward(t); },
                                                   probe.suite().items, options);
  EXPECT_EQ(scored->at("tokens"), 256);
  EXPECT_EQ(scored->at("correct"), direct.correct);
  EXPECT_EQ(scored->at("correct_norm"), direct.correct_norm);
  EXPECT_EQ(scored->at("items"), 138);
  EXPECT_EQ(scored->at("batch_rows"), 32);

  std::optional<DownstreamProbe> held(probe);
  const auto wrapped = with_downstream([](train::EvalContext&) { return nlohmann::json{{"own", 1}}; }, held);
  const auto at_point = wrapped(at_256);
  EXPECT_EQ(at_point.at("own"), 1);
  EXPECT_EQ(at_point.at("downstream").at("correct"), direct.correct);
  EXPECT_FALSE(wrapped(at_128).contains("downstream"));
}

TEST(DownstreamRecord, PointsAndFinalComeFromTheEvaluationsAndAnAbsentSuiteSaysWhy) {
  const auto spec = builtin_spec();
  std::optional<DownstreamProbe> probe(std::in_place, spec, load_downstream_suite(spec, 256, "/nonexistent"), 256, 64);
  const nlohmann::json evaluations = {
      {{"tokens", 256}, {"probes", {{"downstream", {{"tokens", 256}, {"acc", 0.3}}}}}},
      {{"tokens", 512}, {"probes", {{"downstream", {{"tokens", 512}, {"acc", 0.4}}}}}},
  };
  auto record = downstream_record(probe, evaluations);
  EXPECT_TRUE(record.at("measured"));
  EXPECT_EQ(record.at("points").size(), 2u);
  EXPECT_EQ(record.at("final").at("acc"), 0.4);
  EXPECT_EQ(record.at("suite").at("suite"), train::kBuiltinSuiteId);

  record = downstream_record(probe, nlohmann::json::array({evaluations[0]}));  // stopped before the budget
  EXPECT_FALSE(record.contains("final"));
  record = downstream_record(std::nullopt, evaluations);
  EXPECT_FALSE(record.at("measured"));
  EXPECT_NE(record.at("reason").get<std::string>().find("declares no downstream suite"), std::string::npos);
}

nlohmann::json result(const std::string& arm, std::uint64_t seed, double acc, double acc_norm) {
  const nlohmann::json final = {{"tokens", 512}, {"acc", acc}, {"acc_norm", acc_norm}, {"chance", 0.25}, {"items", 100}};
  return {{"kind", "result"},
          {"data",
           {{"arm", arm},
            {"seed", seed},
            {"downstream_task_quality",
             {{"measured", true},
              {"metric", "acc_norm"},
              {"suite", {{"suite", "s"}, {"items", 100}, {"chance", 0.25}, {"source", "src"}, {"licence", "l"}}},
              {"points", {final}},
              {"final", final}}}}}};
}

const report::Table* table(const report::Page& page, const std::string& id) {
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table && block.table.id == id) return &block.table;
  }
  return nullptr;
}

double number(const report::Cell& cell) { return std::get<double>(cell.value); }

TEST(DownstreamSection, MeansAndPairedDifferencesEqualTheHandComputedOnes) {
  const nlohmann::json parameters = {{"downstream", {{"metric", "acc_norm"}, {"at_tokens", {512}}, {"batch_rows", 4}}}};
  // acc_norm differences b - a by seed: +0.10, +0.20, +0.30 (mean 0.20, every one positive).
  const std::vector<nlohmann::json> terminal = {result("a", 1, 0.30, 0.40), result("b", 1, 0.35, 0.50),
                                                result("a", 2, 0.32, 0.42), result("b", 2, 0.36, 0.62),
                                                result("a", 3, 0.34, 0.44), result("b", 3, 0.37, 0.74)};
  DownstreamSection section{{"a", "b"}, {{"b", "a"}}, Bootstrap{0.95, 1000, 7}, "analysis"};
  report::Page page;
  const auto results = add_downstream_results(parameters, terminal, section, page);
  ASSERT_TRUE(results.declared);
  const auto d = results.difference("b", "a");
  ASSERT_TRUE(d);
  EXPECT_NEAR(d->estimate, 0.20, 1e-12);
  EXPECT_GE(d->low, 0.10 - 1e-12);  // a bootstrap mean lies within the smallest and largest difference
  EXPECT_LE(d->high, 0.30 + 1e-12);
  EXPECT_EQ(results.answer("b", "a", false), "yes");
  EXPECT_EQ(results.answer("b", "a", true), "no");
  EXPECT_EQ(results.answer("a", "b", false), "not yet (fewer than two seed pairs)");

  const auto* means = table(page, "downstream");
  ASSERT_NE(means, nullptr);
  ASSERT_EQ(means->rows.size(), 3u);  // acc, acc_norm, chance
  EXPECT_EQ(std::get<std::string>(means->rows[1][0].value), "acc_norm");
  EXPECT_NEAR(number(means->rows[1][1]), 0.42, 1e-12);  // a's mean
  EXPECT_NEAR(number(means->rows[1][4]), 0.62, 1e-12);  // b's mean
  EXPECT_NEAR(number(means->rows[2][1]), 0.25, 1e-12);  // chance beside every figure
  EXPECT_NE(table(page, "downstream-paired"), nullptr);

  report::Page none;
  const auto undeclared = add_downstream_results(nlohmann::json::object(), terminal, section, none);
  EXPECT_FALSE(undeclared.declared);
  EXPECT_EQ(undeclared.answer("b", "a", false), "not measured (no suite declared)");
  ASSERT_EQ(none.blocks.size(), 1u);
}

}  // namespace
}  // namespace k3lab::experiments::training
