// The smoke profile end to end through the generic runner (experiments::run_experiment), against the
// embedded mock and against a MockServer given by base URL, plus the report rendered from the ledger.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "context_probe/context_probe_experiment.hpp"
#include "k3lab/mock/reader_model.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "k3lab/experiments/runner.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

// The catalog of a report built from this module alone.
experiments::Catalog one_module_catalog() {
  return {{"context-probe"}, [](const std::string&) { return experiments::context_probe::make_experiment(); }};
}


namespace cp = experiments::context_probe;
using experiments::RunRequest;

constexpr const char* kSimulated = "simulated endpoint: not evidence about Kimi K3";

struct CleanEnv {
  ScopedEnv key{"MOONSHOT_API_KEY", std::nullopt};
  ScopedEnv url{"K3LAB_BASE_URL", std::nullopt};
  ScopedEnv vocab{"K3LAB_TOKENIZER_VOCAB", std::nullopt};
};

RunRequest smoke_request(const std::filesystem::path& runs, cp::RunHooks hooks = {}) {
  RunRequest r;
  r.experiment_id = "context-probe";
  r.profile = "smoke";
  r.runs_root = runs;
  r.unfrozen = true;  // tests run the working tree's protocol whether or not it is frozen
  r.protocol_file = protocol_file();
  r.experiment_factory = [hooks] { return std::make_unique<cp::ContextProbeExperiment>(hooks); };
  return r;
}

std::vector<nlohmann::json> terminal(const std::filesystem::path& run_dir) {
  experiments::RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  return records.terminal_records();
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ContextProbeSmoke, EmbeddedMockRunsTheWholeMatrixAndTheReportSaysSimulated) {
  CleanEnv env;
  ScratchDir dir;
  const auto summary = experiments::run_experiment(smoke_request(dir.path() / "runs"));
  ASSERT_EQ(summary.exit_code, 0) << summary.message;
  EXPECT_EQ(summary.planned, 30u);
  EXPECT_EQ(summary.results + summary.invalid + summary.failures, 30u);
  EXPECT_EQ(summary.failures, 0u);
  EXPECT_EQ(summary.invalid, 0u);

  const auto records = terminal(summary.run_dir);
  ASSERT_EQ(records.size(), 30u);
  std::size_t passes = 0;
  for (const auto& r : records) {
    EXPECT_EQ(r["labels"], nlohmann::json::array({kSimulated})) << r["unit"];
    const auto& spec = r["spec"];
    const auto& data = r["data"];
    EXPECT_EQ(data["call"]["endpoint"], "embedded-mock");
    EXPECT_TRUE(data["call"]["simulated"].get<bool>());
    EXPECT_EQ(data["prefix_id"], spec["prefix_id"]);  // the embedded mock's cache is born with the run: unsalted
    if (spec["role"] == "prime") continue;
    if (spec["stratum"] == "cold") {
      EXPECT_EQ(data["call"]["cached_tokens"], 0) << r["unit"];
    } else {
      EXPECT_GT(data["call"]["cached_tokens"].get<int>(), 0) << r["unit"];
    }
    EXPECT_LE(data["observed"]["budget_used"].get<std::int64_t>(), spec["length"].get<std::int64_t>());
    passes += data["verdict"]["passed"].get<bool>() ? 1 : 0;
  }
  // At 4K-8K tokens the reader's recall-failure probability is about 2%: nearly every cell passes.
  EXPECT_GE(passes, 16u);

  const auto report_dir = dir.path() / "report";
  const auto page = experiments::build_page(summary.run_dir, dir.path() / "runs", one_module_catalog());
  const auto folder = report::render_page(page, report_dir);
  const std::string md = read_file(folder / "index.md");
  EXPECT_NE(md.find(kSimulated), std::string::npos);
  EXPECT_NE(md.find("Interpretation boundary"), std::string::npos);
  EXPECT_NE(md.find("The simulated endpoint"), std::string::npos);
  EXPECT_EQ(md.find("The Kimi K3 API ("), std::string::npos);  // a filled-in sentence never names Kimi for the mock
  EXPECT_NE(md.find("through context length"), std::string::npos);
  EXPECT_NE(md.find("Anything above 32,768 tokens"), std::string::npos);
  for (const auto* family : {"single", "distractor", "multi-hop", "order-state", "repository"}) {
    EXPECT_TRUE(std::filesystem::exists(folder / "charts" / (std::string("pass-rate-") + family + ".svg"))) << family;
  }
  const auto table = nlohmann::json::parse(read_file(folder / "tables" / "pass-rate.json"));
  EXPECT_FALSE(table.dump().empty());
}

TEST(ContextProbeSmoke, TwoRunsOfTheSameCommandGiveTheSameLedger) {
  CleanEnv env;
  ScratchDir dir;
  auto a = smoke_request(dir.path() / "a");
  auto b = smoke_request(dir.path() / "b");
  const auto sa = experiments::run_experiment(a);
  const auto sb = experiments::run_experiment(b);
  ASSERT_EQ(sa.exit_code, 0) << sa.message;
  ASSERT_EQ(sb.exit_code, 0) << sb.message;
  const auto ra = terminal(sa.run_dir);
  const auto rb = terminal(sb.run_dir);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(core::deterministic_part(ra[i]), core::deterministic_part(rb[i])) << ra[i]["unit"];
  }
}

// A MockServer that demands a key and logs every reasoning text it sends, so the run dir can be
// searched for both.
struct KeyedServer {
  std::mutex mutex;
  std::vector<std::string> reasoning;
  std::unique_ptr<api::MockServer> server;

  explicit KeyedServer(const std::string& key) {
    api::MockServerOptions options;
    options.required_api_key = key;
    auto reader = mock::context_reader_model();
    options.model = [this, reader](const nlohmann::json& request) {
      auto reply = reader(request);
      std::lock_guard lock(mutex);
      reasoning.push_back(reply.reasoning_content);
      return reply;
    };
    server = std::make_unique<api::MockServer>(std::move(options));
    server->start(0);
  }
};

TEST(ContextProbeSmoke, AKeyedRunStoresNeitherTheKeyNorRawReasoning) {
  CleanEnv env;
  const std::string key = "sk-k3lab-fake-7f3a9c2e51d84b06aa19";
  ScopedEnv set_key("MOONSHOT_API_KEY", key);
  KeyedServer keyed(key);
  ScratchDir dir;
  auto request = smoke_request(dir.path() / "runs");
  request.options = {{"base_url", keyed.server->base_url()}};
  const auto summary = experiments::run_experiment(request);
  ASSERT_EQ(summary.exit_code, 0) << summary.message;
  EXPECT_EQ(summary.results, 30u);
  const auto page = experiments::build_page(summary.run_dir, dir.path() / "runs", one_module_catalog());
  report::render_page(page, dir.path() / "report");

  EXPECT_TRUE(files_containing(dir.path(), key).empty());
  EXPECT_TRUE(files_containing(dir.path(), key.substr(0, 16)).empty());
  ASSERT_EQ(keyed.reasoning.size(), 30u);
  std::set<std::string> hashes;
  for (const auto& text : keyed.reasoning) {
    ASSERT_FALSE(text.empty());
    EXPECT_TRUE(files_containing(dir.path(), text).empty()) << text;
    hashes.insert(core::sha256_hex(text));
  }
  EXPECT_TRUE(files_containing(dir.path(), "Reader notes").empty());
  // What is kept instead: presence and the SHA-256 of exactly the text that was sent.
  for (const auto& r : terminal(summary.run_dir)) {
    EXPECT_TRUE(r["data"]["call"]["reasoning_present"].get<bool>());
    EXPECT_TRUE(hashes.count(r["data"]["call"]["reasoning_sha256"].get<std::string>())) << r["unit"];
    EXPECT_FALSE(r["data"]["call"]["simulated"].get<bool>() && r["labels"].empty());
  }
  // The page says simulated because the server identified itself as k3lab's mock.
  EXPECT_NE(std::find(page.labels.begin(), page.labels.end(), kSimulated), page.labels.end());
}

TEST(ContextProbeSmoke, AWrongKeyEchoedByTheServerIsRedactedAndStopsTheWindow) {
  CleanEnv env;
  const std::string wrong = "sk-k3lab-wrong-0c4be1d9a7f24e55b3";
  ScopedEnv set_key("MOONSHOT_API_KEY", wrong);
  KeyedServer keyed("sk-k3lab-right-91ae22f0c7d3485a8b");
  ScratchDir dir;
  auto request = smoke_request(dir.path() / "runs");
  request.options = {{"base_url", keyed.server->base_url()}};
  const auto summary = experiments::run_experiment(request);
  EXPECT_EQ(summary.exit_code, experiments::kExitWindowStopped) << summary.message;
  const auto records = terminal(summary.run_dir);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0]["kind"], "failure");
  EXPECT_EQ(records[0]["reason"], "auth");
  EXPECT_EQ(records[0]["data"]["call"]["attempts"], 1);  // auth errors are never retried
  EXPECT_TRUE(files_containing(dir.path(), wrong).empty());
  EXPECT_TRUE(files_containing(dir.path(), wrong.substr(0, 12)).empty());
}

TEST(ContextProbeSmoke, FailedScoredCellsBeyondFivePercentStopTheWindowAndTheReportSaysSo) {
  CleanEnv env;
  cp::RunHooks hooks;
  hooks.clock = std::make_shared<api::ManualClock>();
  hooks.embedded_faults.script = {api::FaultKind::server_error, api::FaultKind::server_error,
                                  api::FaultKind::server_error, api::FaultKind::server_error};
  ScratchDir dir;
  const auto summary = experiments::run_experiment(smoke_request(dir.path() / "runs", hooks));
  // 20 scored cells tolerate floor(0.05 x 20) = 1 without a measurement. The first block's cold cell
  // fails (server errors, retries stop at two), its priming call fails (not scored), and its warm cell
  // is then invalid without a call: 2 > 1 stops the window.
  EXPECT_EQ(summary.exit_code, experiments::kExitWindowStopped) << summary.message;
  const auto records = terminal(summary.run_dir);
  ASSERT_EQ(records.size(), 3u);
  std::map<std::string, nlohmann::json> by_role;
  for (const auto& r : records) by_role[r["spec"]["role"].get<std::string>() + "/" + r["spec"]["stratum"].get<std::string>()] = r;
  EXPECT_EQ(by_role["scored/cold"]["kind"], "failure");
  EXPECT_EQ(by_role["scored/cold"]["reason"], "server");
  EXPECT_EQ(by_role["scored/cold"]["data"]["call"]["attempts"], 3);  // the retries stop at two
  EXPECT_EQ(by_role["prime/warm"]["kind"], "failure");
  EXPECT_EQ(by_role["scored/warm"]["kind"], "invalid");
  EXPECT_EQ(by_role["scored/warm"]["reason"], "priming-failed");
  EXPECT_FALSE(by_role["scored/warm"]["data"].contains("call"));
  bool window_record = false;
  for (const auto& r : core::read_ledger(summary.run_dir).records) window_record |= r.value("kind", "") == "window";
  EXPECT_TRUE(window_record);
  const auto page = experiments::build_page(summary.run_dir, dir.path() / "runs", one_module_catalog());
  const auto folder = report::render_page(page, dir.path() / "report");
  const std::string md = read_file(folder / "index.md");
  EXPECT_NE(md.find("STOPPED by the window rule"), std::string::npos);
  EXPECT_NE(md.find("This window is invalid"), std::string::npos);
  // Resuming a stopped window does nothing.
  const auto again = experiments::run_experiment(smoke_request(dir.path() / "runs", hooks));
  EXPECT_TRUE(again.already_complete);
  EXPECT_EQ(again.ran_now, 0u);
}

TEST(ContextProbeSmoke, AResumeAfterTwentyFourHoursIsRefusedAndStopsTheWindow) {
  CleanEnv env;
  cp::RunHooks hooks;
  auto clock = std::make_shared<api::ManualClock>();
  hooks.clock = clock;
  ScratchDir dir;
  auto first = smoke_request(dir.path() / "runs", hooks);
  first.only_units = {"family=single/fixture=1/length=16384/stratum=cold/rep=1"};
  const auto started = experiments::run_experiment(first);
  ASSERT_EQ(started.exit_code, 0) << started.message;
  ASSERT_EQ(started.results, 1u);

  clock->advance(std::chrono::hours(25));
  const auto resumed = experiments::run_experiment(smoke_request(dir.path() / "runs", hooks));
  EXPECT_EQ(resumed.exit_code, experiments::kExitWindowStopped) << resumed.message;
  EXPECT_EQ(resumed.run_dir, started.run_dir);
  const auto records = terminal(resumed.run_dir);
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    if (r["unit"] == first.only_units[0]) {
      EXPECT_EQ(r["kind"], "result");
      continue;
    }
    EXPECT_EQ(r["reason"], "window-expired");
    EXPECT_EQ(r["timing"]["window_start_utc"], "2026-01-01T00:00:00.000Z");  // read back from the ledger
    EXPECT_FALSE(r["data"].contains("call"));                                 // refused before sending
  }
}

// Runs one chosen unit, then stops the run before that unit's record is written, as a SIGKILL right
// after its call would: the unit stays open and the next process (a fresh embedded mock) redoes it.
class ContextProbeStoppedInUnit : public cp::ContextProbeExperiment {
 public:
  ContextProbeStoppedInUnit(std::string unit_id, cp::RunHooks hooks)
      : cp::ContextProbeExperiment(std::move(hooks)), stop_in_(std::move(unit_id)) {}

  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv& env) override {
    auto outcome = cp::ContextProbeExperiment::run_unit(unit, env);
    if (unit.id != stop_in_) return outcome;
    experiments::stop_flag().store(true);
    throw api::CallInterrupted("test: stopped after the call of " + unit.id + ", before its record");
  }

 private:
  std::string stop_in_;
};

TEST(ContextProbeSmoke, AResumedRunEqualsAnUninterruptedOneApartFromTheReprimingCall) {
  CleanEnv env;
  ScratchDir dir;
  const auto straight = experiments::run_experiment(smoke_request(dir.path() / "straight"));
  ASSERT_EQ(straight.exit_code, 0) << straight.message;
  const auto reference = terminal(straight.run_dir);

  // The warm cell of the second block in execution order: its priming call ran in the first process.
  const auto units = smoke_units();
  ASSERT_GT(units.size(), 6u);
  const std::string stopped_in = units[5].id;
  ASSERT_EQ(units[5].spec["stratum"], "warm");
  ASSERT_EQ(units[4].id, units[5].spec["primed_by"]);
  auto interrupted = smoke_request(dir.path() / "resumed");
  interrupted.experiment_factory = [stopped_in] {
    return std::make_unique<ContextProbeStoppedInUnit>(stopped_in, cp::RunHooks{});
  };
  const auto first = experiments::run_experiment(interrupted);
  experiments::stop_flag().store(false);
  ASSERT_EQ(first.exit_code, experiments::kExitInterrupted) << first.message;
  ASSERT_EQ(first.results, 5u);
  const auto resumed = experiments::run_experiment(smoke_request(dir.path() / "resumed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.message;
  ASSERT_EQ(resumed.run_dir, first.run_dir);
  const auto records = terminal(resumed.run_dir);

  ASSERT_EQ(records.size(), reference.size());
  std::map<std::string, nlohmann::json> expected;
  for (const auto& r : reference) expected[r["unit"].get<std::string>()] = r;
  for (const auto& r : records) {
    const std::string unit = r["unit"].get<std::string>();
    ASSERT_TRUE(expected.count(unit)) << unit;
    auto got = core::deterministic_part(r);
    // The one field a resume may add (README, "What a run guarantees"): the priming request sent
    // again before a warm cell whose priming call ran in an earlier process.
    EXPECT_EQ(got["data"].contains("reprime"), unit == stopped_in) << unit;
    if (unit == stopped_in && got["data"].contains("reprime")) {
      // The repeated priming call is answered as the priming unit's own call was.
      const auto& primed = expected.at(units[4].id)["data"]["call"];
      EXPECT_EQ(got["data"]["reprime"]["call"], primed);
      got["data"].erase("reprime");
    }
    EXPECT_EQ(got, core::deterministic_part(expected.at(unit))) << unit;
  }
}

}  // namespace
}  // namespace k3lab::context_probe_test
