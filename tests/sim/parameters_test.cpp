// The committed protocol and fixtures: the protocol parses under both profiles, the derived sizes
// are the reference numbers, every committed retained trace hashes to the protocol's value, and
// the smoke traces regenerate bit for bit.
#include <filesystem>

#include <gtest/gtest.h>

#include "k3lab/core/protocol.hpp"
#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/trace_file.hpp"
#include "k3lab/sim/trace_source.hpp"

namespace k3lab::sim {
namespace {

const std::filesystem::path kRoot = K3LAB_SOURCE_DIR;

core::Protocol protocol() { return core::load_protocol(kRoot / "experiments/memory-pool.json", &parameter_schema()); }

TEST(Parameters, ProtocolParsesUnderBothProfiles) {
  const core::Protocol p = protocol();
  EXPECT_EQ(p.evidence_class, "systems-simulation");
  const SimParameters full = parse_parameters(p.parameters_for("full"));
  const SimParameters smoke = parse_parameters(p.parameters_for("smoke"));
  EXPECT_EQ(full.arrivals_per_trace, 1'000'000u);
  EXPECT_EQ(full.seeded_traces_per_mix, 20u);
  EXPECT_EQ(full.mixes.size(), 3u);
  EXPECT_EQ(full.drain_factor, 2.0);
  EXPECT_LT(smoke.arrivals_per_trace, full.arrivals_per_trace);
  // Smoke changes sizes only: the same mixes, policies, model and memory.
  EXPECT_EQ(p.parameters_for("full")["mixes"], p.parameters_for("smoke")["mixes"]);
  EXPECT_EQ(p.parameters_for("full")["policies"], p.parameters_for("smoke")["policies"]);
  EXPECT_EQ(p.parameters_for("full")["model"], p.parameters_for("smoke")["model"]);
  // Arms and policies agree one to one; only the padded reference arm is not the seed's.
  ASSERT_EQ(p.arms.size(), full.policies.size());
  for (std::size_t i = 0; i < p.arms.size(); ++i) {
    EXPECT_EQ(p.arms[i].id, full.policies[i].id);
    EXPECT_EQ(p.arms[i].requested_by_seed, full.policies[i].kind != PolicyKind::PaddedSinglePage);
  }
}

TEST(Parameters, DerivedSizesAreKimiK3AtTheProtocolsTensorParallelism) {
  const SimParameters p = parse_parameters(protocol().parameters_for("full"));
  EXPECT_EQ(p.model.state_bytes_per_request(), 28'085'760);  // memsim.md: K3, TP 16
  EXPECT_EQ(p.model.mla_bytes_per_token(), 27'648);
  const auto sizes = derived_sizes(p);
  EXPECT_EQ(sizes["page_bytes"], 27'648 * 64);
  // Protocol v2 tunes the split; at the v1 ratio 0.9 the split is SGLang's rounding of the budget.
  EXPECT_THROW(policy_config(p, p.policies[p.policy_index("fixed-split")]), std::invalid_argument);
  const auto fixed = policy_config(p, with_ratio(p.policies[p.policy_index("fixed-split")], 0.9)).fixed;
  EXPECT_EQ(fixed.state_slots, 505u);  // floor(30e9 * 0.9 / 1.9 / 28,085,760)
  EXPECT_EQ(fixed.kv_pages, static_cast<std::uint32_t>((30'000'000'000LL - 505LL * 28'085'760) / 1'769'472));
}

TEST(Parameters, ErrorsNameTheFieldAndTheFix) {
  nlohmann::json j = protocol().parameters_for("full");
  j["mixes"][0]["phases"][0]["arrival"]["cv"] = 2.0;  // poisson with a cv
  j["policies"][1].erase("compaction");
  j["model"]["tensor_parallel"] = 7;
  j["memory"]["page_tokenz"] = 64;
  try {
    parse_parameters(j);
    FAIL() << "expected errors";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("page_tokenz"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean \"page_tokens\""), std::string::npos) << m;
  }
  j["memory"].erase("page_tokenz");
  try {
    parse_parameters(j);
    FAIL() << "expected errors";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("parameters.mixes[0].phases[0].arrival.cv"), std::string::npos) << m;
    EXPECT_NE(m.find("parameters.policies[1].compaction: required"), std::string::npos) << m;
    EXPECT_NE(m.find("tensor_parallel"), std::string::npos) << m;
  }
}

TEST(Parameters, RetainedSeedMustBeTheProtocolsStreamSeed) {
  nlohmann::json j = protocol().parameters_for("full");
  j["seed"] = 1;
  EXPECT_THROW(parse_parameters(j), std::invalid_argument);
}

TEST(Parameters, UnitSeedsAreStreamSeedsOfMixAndTrace) {
  const SimParameters p = parse_parameters(protocol().parameters_for("full"));
  EXPECT_EQ(trace_seed(p, 2, 5), core::stream_seed(p.seed, {2, 5}));
  EXPECT_NE(trace_seed(p, 2, 5), trace_seed(p, 5, 2));
  EXPECT_EQ(trace_label(0), "retained");
  EXPECT_EQ(trace_label(7), "seeded-07");
}

TEST(RetainedTraces, CommittedFilesHashToTheProtocol) {
  const core::Protocol proto = protocol();
  for (const std::string profile : {"full", "smoke"}) {
    const SimParameters p = parse_parameters(proto.parameters_for(profile));
    for (const auto& r : p.retained_traces) {
      std::string sha;
      const Trace t = read_trace_file(resolve_fixture(r.file, kRoot), &sha);
      EXPECT_EQ(sha, r.sha256) << r.file;
      EXPECT_EQ(t.generator_seed, r.generator_seed) << r.file;
      EXPECT_EQ(t.size(), p.arrivals_per_trace) << r.file;
    }
  }
}

TEST(RetainedTraces, SmokeTracesRegenerateFromTheirSeed) {
  const SimParameters p = parse_parameters(protocol().parameters_for("smoke"));
  for (std::size_t m = 0; m < p.mixes.size(); ++m) {
    const UnitTrace u = load_retained_trace(p, m, kRoot, true);
    EXPECT_TRUE(u.regenerated_matches) << p.mixes[m].id;
    EXPECT_EQ(u.sha256, p.retained_traces[m].sha256);
  }
}

TEST(RetainedTraces, ATamperedFileIsRefused) {
  const SimParameters p = parse_parameters(protocol().parameters_for("smoke"));
  SimParameters tampered = p;
  tampered.retained_traces[0].sha256 = std::string(64, 'a');
  EXPECT_THROW(load_retained_trace(tampered, 0, kRoot, false), TraceHashMismatch);
  tampered = p;
  tampered.retained_traces[0].file = "fixtures/memory-pool/does-not-exist.k3tr";
  EXPECT_THROW(load_retained_trace(tampered, 0, kRoot, false), std::runtime_error);
}

}  // namespace
}  // namespace k3lab::sim
