// The k3lab binary against a mock endpoint it does not start itself: a run is bound to its endpoint
// (resuming against another one is refused and appends nothing), a blank --base-url is a usage error,
// a stalled call with keep-alive comments is caught by --stall-timeout, agent-replay waits before it
// resends a turn that met a 500, and SIGINT during a stalled call exits 130 with the unit left open.
// The protocol's transport section bounds a stalled call, and a bad value in it is refused by name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/mock/agent_model.hpp"

extern char** environ;

namespace k3lab::api {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using k3lab::testing::ProcessOptions;
using k3lab::testing::read_file;
using k3lab::testing::read_ledger_records;
using k3lab::testing::run_dirs;
using k3lab::testing::run_k3lab;
using k3lab::testing::TempDir;

constexpr const char* kAgentUnit = "task=1/arm=control/rep=1";
constexpr const char* kProbeUnit = "family=repository/fixture=1/length=16384/stratum=cold/rep=1";

ProcessOptions hermetic(const TempDir& dir) {
  ProcessOptions options;
  options.cwd = dir.path();
  options.env["K3LAB_PROTOCOL_DIR"] = (k3lab::testing::source_dir() / "experiments").string();
  for (const char* name : {"MOONSHOT_API_KEY", "K3LAB_BASE_URL", "K3LAB_TOKENIZER_VOCAB"}) options.env[name] = std::nullopt;
  return options;
}

std::vector<std::string> run_args(const std::string& id, const std::string& unit, std::vector<std::string> more) {
  std::vector<std::string> args = {"run", id, "--profile", "smoke", "--out", "runs", "--unit", unit};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string ledger_bytes(const std::filesystem::path& run_dir) { return read_file(run_dir / "ledger.jsonl"); }

std::vector<json> terminal_for(const std::filesystem::path& run_dir, const std::string& unit) {
  std::vector<json> out;
  for (const auto& r : read_ledger_records(run_dir)) {
    if (k3lab::testing::is_terminal(r) && r.value("unit", "") == unit) out.push_back(r);
  }
  return out;
}

TEST(EndpointCli, BlankBaseUrlIsAUsageErrorAndRecordsNothing) {
  TempDir dir("k3lab-blank-url");
  for (const char* id : {"context-probe", "agent-replay"}) {
    for (const char* url : {"", "   "}) {
      const auto run = run_k3lab({"run", id, "--profile", "smoke", "--out", "runs", "--base-url", url}, hermetic(dir));
      EXPECT_EQ(run.exit_code, 2) << id << " --base-url '" << url << "'\n" << run.output();
      EXPECT_NE(run.err.find("--base-url is empty"), std::string::npos) << run.output();
    }
  }
  const auto blank_name =
      run_k3lab({"run", "agent-replay", "--profile", "smoke", "--out", "runs", "--served-model", " "}, hermetic(dir));
  EXPECT_EQ(blank_name.exit_code, 2) << blank_name.output();
  EXPECT_FALSE(std::filesystem::exists(dir / "runs"));
}

TEST(EndpointCli, ResumeAgainstAnotherEndpointIsRefusedAndAppendsNothing) {
  MockServer first, second;
  first.start(0);
  second.start(0);
  TempDir dir("k3lab-endpoint-binding");
  const auto options = hermetic(dir);
  const auto started =
      run_k3lab(run_args("agent-replay", kAgentUnit, {"--base-url", first.base_url(), "--no-preflight"}), options);
  ASSERT_EQ(started.exit_code, 0) << started.output();
  const auto runs = run_dirs(dir / "runs", "agent-replay");
  ASSERT_EQ(runs.size(), 1u);
  const json manifest = json::parse(read_file(runs[0] / "manifest.json"));
  EXPECT_EQ(manifest["options"]["endpoint"],
            (json{{"base_url", first.base_url()}, {"served_model", ""}, {"simulated", false}}));
  EXPECT_EQ(manifest["options"]["preflight"], "skipped (--no-preflight)");
  const std::string before = ledger_bytes(runs[0]);
  const std::size_t calls_before = first.received().size();
  ASSERT_GT(calls_before, 0u);

  const std::vector<std::pair<std::string, std::vector<std::string>>> others = {
      {"no --base-url (the embedded mock)", {}},
      {"another port", {"--base-url", second.base_url()}},
      {"a served-model alias", {"--base-url", first.base_url(), "--served-model", "kimi-k3-alias"}}};
  for (const auto& [what, flags] : others) {
    const auto resumed = run_k3lab(run_args("agent-replay", "task=2/arm=control/rep=1", flags), options);
    EXPECT_EQ(resumed.exit_code, 2) << what << "\n" << resumed.output();
    EXPECT_NE(resumed.err.find("refusing to resume"), std::string::npos) << what << "\n" << resumed.output();
    EXPECT_NE(resumed.err.find(first.base_url()), std::string::npos) << "the message must name the run's endpoint";
    EXPECT_NE(resumed.err.find("--fresh"), std::string::npos) << resumed.output();
    EXPECT_EQ(ledger_bytes(runs[0]), before) << what << " appended to the ledger";
  }
  EXPECT_TRUE(second.received().empty()) << "the refused run called the other endpoint";
  EXPECT_EQ(first.received().size(), calls_before);

  // The same endpoint resumes.
  const auto same = run_k3lab(run_args("agent-replay", "task=2/arm=control/rep=1", {"--base-url", first.base_url()}), options);
  EXPECT_EQ(same.exit_code, 0) << same.output();
  EXPECT_EQ(terminal_for(runs[0], "task=2/arm=control/rep=1").size(), 1u);
  // --fresh starts a separate run against the other endpoint.
  const auto fresh = run_k3lab(run_args("agent-replay", kAgentUnit, {"--fresh"}), options);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.output();
  EXPECT_EQ(run_dirs(dir / "runs", "agent-replay").size(), 2u);
}

TEST(EndpointCli, ServedModelIsSentAndRecorded) {
  MockServerOptions mock;
  mock.models = {"served-k3"};
  mock.log_bodies = true;
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-served-model");
  const auto run = run_k3lab(run_args("agent-replay", kAgentUnit,
                                      {"--base-url", server.base_url(), "--served-model", "served-k3", "--no-preflight"}),
                             hermetic(dir));
  ASSERT_EQ(run.exit_code, 0) << run.output();
  ASSERT_FALSE(server.received().empty());
  for (const auto& r : server.received()) EXPECT_EQ(r.body.value("model", ""), "served-k3");
  const auto runs = run_dirs(dir / "runs", "agent-replay");
  ASSERT_EQ(runs.size(), 1u);
  const json manifest = json::parse(read_file(runs[0] / "manifest.json"));
  EXPECT_EQ(manifest["options"]["served_model"], "served-k3");
  EXPECT_EQ(manifest["parameters"]["model"], "kimi-k3") << "the protocol's model id must stay frozen";
}

TEST(EndpointCli, StallTimeoutCatchesAStreamOfKeepAlives) {
  MockServerOptions mock;
  mock.faults.script = {FaultKind::stall_keepalive};
  mock.faults.keepalive_interval = milliseconds(50);
  mock.faults.stall_limit = seconds(120);
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-stall");
  const auto run = run_k3lab(run_args("agent-replay", kAgentUnit,
                                      {"--base-url", server.base_url(), "--stall-timeout", "1", "--no-preflight"}),
                             hermetic(dir));
  ASSERT_EQ(run.exit_code, 0) << run.output();
  const auto runs = run_dirs(dir / "runs", "agent-replay");
  const json manifest = json::parse(read_file(runs.at(0) / "manifest.json"));
  EXPECT_EQ(manifest["options"]["stall_timeout_s"], 1) << "the override is recorded";
  EXPECT_EQ(manifest["parameters"]["transport"]["stall_timeout_s"], 600) << "the frozen value stays in the design";
  const auto terminal = terminal_for(runs.at(0), kAgentUnit);
  ASSERT_EQ(terminal.size(), 1u);
  const json& calls = terminal[0]["data"]["calls"];
  ASSERT_GE(calls.size(), 2u) << terminal[0].dump();
  EXPECT_EQ(calls[0]["error_class"], "transport");
  EXPECT_EQ(calls[0]["try"], 0);
  EXPECT_EQ(calls[1]["error_class"], "none");
  EXPECT_EQ(calls[1]["try"], 1);
}

// A copy of the repository's protocols in `dir` whose `id` has parameters.transport = `section`; the
// options run k3lab against it (an edited protocol is unfrozen, so runs need --unfrozen).
ProcessOptions with_transport_section(const TempDir& dir, const std::string& id, const json& section) {
  const auto protocols = k3lab::testing::copy_protocols(dir.path() / "edited");
  json protocol = json::parse(read_file(protocols / (id + ".json")));
  protocol["parameters"]["transport"] = section;
  std::ofstream(protocols / (id + ".json")) << protocol.dump(2);
  ProcessOptions options = hermetic(dir);
  options.env["K3LAB_PROTOCOL_DIR"] = protocols.string();
  return options;
}

TEST(EndpointCli, TheProtocolsStallTimeoutCatchesAStalledCall) {
  MockServerOptions mock;
  mock.faults.script = {FaultKind::stall_keepalive};
  mock.faults.keepalive_interval = milliseconds(50);
  mock.faults.stall_limit = seconds(120);
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-protocol-stall");
  const auto options = with_transport_section(dir, "agent-replay", {{"stall_timeout_s", 1}});
  const auto run = run_k3lab(
      run_args("agent-replay", kAgentUnit, {"--base-url", server.base_url(), "--no-preflight", "--unfrozen"}), options);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  const auto runs = run_dirs(dir / "runs", "agent-replay");
  const json manifest = json::parse(read_file(runs.at(0) / "manifest.json"));
  EXPECT_EQ(manifest["parameters"]["transport"]["stall_timeout_s"], 1);
  EXPECT_FALSE(manifest["options"].contains("stall_timeout_s")) << "no run option was given";
  const auto terminal = terminal_for(runs.at(0), kAgentUnit);
  ASSERT_EQ(terminal.size(), 1u);
  const json& data = terminal[0]["data"];
  ASSERT_GE(data["calls"].size(), 2u) << terminal[0].dump();
  EXPECT_EQ(data["calls"][0]["error_class"], "transport");
  EXPECT_EQ(data["calls"][1]["error_class"], "none");
  // The stall guard at the protocol's bound ended the call, not the server (which stalls for 120 s).
  ASSERT_FALSE(data["api_errors"].empty()) << data.dump();
  EXPECT_NE(data["api_errors"][0]["message"].get<std::string>().find("no payload byte for 1 s"), std::string::npos)
      << data["api_errors"].dump();
}

TEST(EndpointCli, ABadTransportValueInTheProtocolIsAnErrorNamingTheField) {
  for (const char* id : {"context-probe", "agent-replay"}) {
    for (const json& value : {json(-5), json("soon")}) {
      TempDir dir("k3lab-bad-transport");
      const auto options = with_transport_section(dir, id, {{"call_timeout_s", value}});
      const auto run = run_k3lab({"run", id, "--profile", "smoke", "--out", "runs", "--unfrozen"}, options);
      EXPECT_NE(run.exit_code, 0) << id << " call_timeout_s " << value.dump() << "\n" << run.output();
      EXPECT_NE(run.output().find("parameters.transport.call_timeout_s"), std::string::npos) << run.output();
      EXPECT_FALSE(std::filesystem::exists(dir / "runs")) << id << ": an invalid protocol must record nothing";
    }
  }
}

// The operation record's "resume" entries of one unit (each carries the wait before the resend).
std::vector<json> waits_of(const std::filesystem::path& run_dir) {
  std::vector<json> out;
  const std::string text = read_file(run_dir / "artifacts" / "agent-replay" / "task-1_arm-control_rep-1.jsonl");
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const json entry = json::parse(text.substr(start, end - start));
    if (entry.value("op", "") == "resume") out.push_back(entry);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

TEST(EndpointCli, AgentReplayBacksOffBeforeResendingAfterA500) {
  MockServerOptions mock;
  mock.faults.script = {FaultKind::server_error, FaultKind::server_error};
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-backoff");
  const auto run =
      run_k3lab(run_args("agent-replay", kAgentUnit, {"--base-url", server.base_url(), "--no-preflight"}), hermetic(dir));
  ASSERT_EQ(run.exit_code, 0) << run.output();
  const auto waits = waits_of(run_dirs(dir / "runs", "agent-replay").at(0));
  ASSERT_EQ(waits.size(), 2u);
  // Backoff 1 s then 2 s, each with up to 50% jitter off.
  EXPECT_GE(waits[0]["wait_ms"].get<double>(), 500.0);
  EXPECT_LE(waits[0]["wait_ms"].get<double>(), 1000.0);
  EXPECT_GE(waits[1]["wait_ms"].get<double>(), 1000.0);
  EXPECT_LE(waits[1]["wait_ms"].get<double>(), 2000.0);
}

TEST(EndpointCli, ANewRunOnAnEndpointThatFailsThePreflightIsRefusedAndRecordsNothing) {
  MockServer server;  // echo model: never calls a tool, which agent-replay needs
  server.start(0);
  TempDir dir("k3lab-preflight-refusal");
  const auto refused = run_k3lab(run_args("agent-replay", kAgentUnit, {"--base-url", server.base_url()}), hermetic(dir));
  EXPECT_EQ(refused.exit_code, 2) << refused.output();
  EXPECT_NE(refused.err.find("pre-flight failed"), std::string::npos) << refused.output();
  EXPECT_NE(refused.err.find("FAIL  tool-call"), std::string::npos) << refused.output();
  EXPECT_FALSE(std::filesystem::exists(dir / "runs")) << "a refused pre-flight must record nothing";

  // context-probe's needs (usage, cache hits) are met: the run starts and its manifest keeps the report.
  const auto started = run_k3lab(run_args("context-probe", kProbeUnit, {"--base-url", server.base_url()}), hermetic(dir));
  ASSERT_EQ(started.exit_code, 0) << started.output();
  const auto runs = run_dirs(dir / "runs", "context-probe");
  ASSERT_EQ(runs.size(), 1u);
  const json preflight = json::parse(read_file(runs[0] / "manifest.json"))["options"]["preflight"];
  EXPECT_TRUE(preflight["ok"].get<bool>()) << preflight.dump();
  EXPECT_EQ(preflight["checks"].size(), 3u) << preflight.dump();
  // The pre-flight's calls are not in the frozen call ledger: one terminal record, the unit's.
  std::size_t terminal = 0;
  for (const auto& r : read_ledger_records(runs[0])) terminal += k3lab::testing::is_terminal(r) ? 1 : 0;
  EXPECT_EQ(terminal, 1u);
}

TEST(EndpointCli, CheckEndpointPassesWhatTheExperimentNeedsAndNamesTheFixOtherwise) {
  MockServer server;  // echo model: usage and prefix caching, but never a tool call
  server.start(0);
  TempDir dir("k3lab-check-endpoint");
  const auto options = hermetic(dir);
  const auto probe = run_k3lab({"check-endpoint", "context-probe", "--base-url", server.base_url()}, options);
  EXPECT_EQ(probe.exit_code, 0) << probe.output();
  EXPECT_NE(probe.out.find("ok    cache"), std::string::npos) << probe.output();
  EXPECT_NE(probe.out.find("ready"), std::string::npos) << probe.output();

  const auto agent = run_k3lab({"check-endpoint", "agent-replay", "--base-url", server.base_url(), "--json"}, options);
  EXPECT_EQ(agent.exit_code, 2) << agent.output();
  const json report = json::parse(agent.out);
  EXPECT_FALSE(report["ok"].get<bool>());
  bool tool_check_failed = false;
  for (const auto& c : report["checks"]) {
    if (c["check"] == "tool-call") tool_check_failed = !c["ok"].get<bool>() && !c["fix"].get<std::string>().empty();
  }
  EXPECT_TRUE(tool_check_failed) << agent.out;

  const auto alias = run_k3lab({"check-endpoint", "context-probe", "--base-url", server.base_url(), "--served-model",
                                "not-served"}, options);
  EXPECT_EQ(alias.exit_code, 2) << alias.output();
  EXPECT_NE(alias.out.find("FAIL  models"), std::string::npos) << alias.output();
  EXPECT_NE(alias.out.find("--served-model"), std::string::npos) << alias.output();
  EXPECT_FALSE(std::filesystem::exists(dir / "runs")) << "a pre-flight records nothing";
}

TEST(EndpointCli, TheAgentPreflightIsARealToolRoundTripThatTheScriptedAgentPasses) {
  MockServerOptions mock;
  // As `k3lab mock-server`: requests that declare tools go to the scripted agent, others are echoed.
  mock.model = [agent = mock::agent_mock_model(), echo = echo_model()](const json& request) {
    const bool tools = request.contains("tools") && request["tools"].is_array() && !request["tools"].empty();
    return tools ? agent(request) : echo(request);
  };
  mock.log_bodies = true;
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-agent-preflight");
  const auto probe = run_k3lab({"check-endpoint", "agent-replay", "--base-url", server.base_url()}, hermetic(dir));
  EXPECT_EQ(probe.exit_code, 0) << probe.output();
  EXPECT_NE(probe.out.find("ok    tool-call"), std::string::npos) << probe.output();
  // The second probe call carried a tool result for the call the first one returned.
  bool answered = false;
  for (const auto& r : server.received()) {
    if (!r.body.is_object() || !r.body.contains("messages")) continue;
    for (const auto& m : r.body["messages"]) answered = answered || m.value("role", "") == "tool";
  }
  EXPECT_TRUE(answered);
}

// Starts k3lab with `args` (output discarded); returns its pid. Everything the child needs is built
// before fork: the mock's threads may hold allocator locks at that moment.
pid_t spawn_k3lab(const std::vector<std::string>& args, const ProcessOptions& options) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!options.env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (const auto& [name, value] : options.env) {
    if (value) env_strings.push_back(name + "=" + *value);
  }
  std::vector<std::string> argv_strings = {k3lab::testing::k3lab_binary().string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  auto pointers = [](std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
  };
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<char*> envp = pointers(env_strings);
  const std::string cwd = options.cwd.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (::chdir(cwd.c_str()) != 0 || devnull < 0) ::_exit(127);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// The exit code of `pid`, or nullopt when it has not ended within `limit` (it is then killed).
std::optional<int> exit_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return std::nullopt;
}

void interrupt_during_stall(const std::string& id, const std::string& unit, int signal_number) {
  MockServerOptions mock;
  mock.faults.script = {FaultKind::stall_keepalive};
  mock.faults.keepalive_interval = milliseconds(50);
  mock.faults.stall_limit = seconds(120);
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-sigint");
  const auto options = hermetic(dir);
  const pid_t pid = spawn_k3lab(run_args(id, unit, {"--base-url", server.base_url(), "--no-preflight"}), options);
  ASSERT_GT(pid, 0);
  const auto give_up = std::chrono::steady_clock::now() + seconds(60);
  while (server.received().empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_FALSE(server.received().empty()) << "k3lab never called the endpoint";
  std::this_thread::sleep_for(milliseconds(300));  // the call is in flight, receiving keep-alives
  ::kill(pid, signal_number);
  // Far above the one-second promise, far below the 120 s the mock would stall and the 600 s stall timeout.
  const auto code = exit_within(pid, seconds(30));
  ASSERT_TRUE(code.has_value()) << id << ": the signal did not end the stalled call";
  EXPECT_EQ(*code, 130) << id;
  const auto runs = run_dirs(dir / "runs", id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(terminal_for(runs[0], unit).empty()) << id << ": the interrupted unit must stay open";
  EXPECT_EQ(server.received().size(), 1u) << id << ": an interrupted call must not be resent";

  // Resuming with the same endpoint finishes the unit (the mock stalls only the first arrival).
  const auto resumed = run_k3lab(run_args(id, unit, {"--base-url", server.base_url()}), options);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output();
  EXPECT_EQ(terminal_for(runs[0], unit).size(), 1u);
}

TEST(EndpointCli, SigintDuringThePreflightExits130AndRecordsNothing) {
  MockServerOptions mock;
  mock.faults.script = {FaultKind::stall_keepalive};
  mock.faults.keepalive_interval = milliseconds(50);
  mock.faults.stall_limit = seconds(120);
  MockServer server(mock);
  server.start(0);
  TempDir dir("k3lab-sigint-preflight");
  const pid_t pid = spawn_k3lab(run_args("context-probe", kProbeUnit, {"--base-url", server.base_url()}), hermetic(dir));
  ASSERT_GT(pid, 0);
  const auto give_up = std::chrono::steady_clock::now() + seconds(60);
  while (server.received().size() < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(20));  // GET /models, then the stalled probe call
  }
  ASSERT_GE(server.received().size(), 2u);
  std::this_thread::sleep_for(milliseconds(300));
  ::kill(pid, SIGINT);
  const auto code = exit_within(pid, seconds(30));
  ASSERT_TRUE(code.has_value()) << "the signal did not end the pre-flight";
  EXPECT_EQ(*code, 130);
  EXPECT_FALSE(std::filesystem::exists(dir / "runs"));
}

TEST(EndpointCli, SigintDuringAStalledCallExits130AndLeavesTheUnitOpen) {
  interrupt_during_stall("agent-replay", kAgentUnit, SIGINT);
  interrupt_during_stall("context-probe", kProbeUnit, SIGTERM);
}

}  // namespace
}  // namespace k3lab::api
