#include "k3lab/sim/parameters.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "k3lab/core/rng.hpp"

namespace k3lab::sim {
namespace {

using core::FieldType;
using core::Schema;
using nlohmann::json;

std::shared_ptr<Schema> model_schema() {
  auto s = std::make_shared<Schema>();
  s->string("name", "model name, for reports (e.g. kimi-k3)");
  s->integer("kda_layers", "number of KDA (linear attention) layers").at_least(1).at_most(1000);
  s->integer("mla_layers", "number of MLA (full attention) layers").at_least(1).at_most(1000);
  s->integer("kda_heads", "KDA heads (before tensor parallel sharding)").at_least(1).at_most(4096);
  s->integer("kda_head_dim", "KDA head dimension d (state is d x d per head)").at_least(1).at_most(4096);
  s->integer("kda_conv_kernel", "short-convolution kernel size K (K-1 cached positions)").at_least(1).at_most(64);
  s->integer("tensor_parallel", "attention tensor-parallel ranks; KDA state shards by heads, MLA latent is replicated").at_least(1).at_most(1024);
  s->integer("ssm_state_bytes_per_element", "bytes per recurrent-state element (fp32: 4)").at_least(1).at_most(8);
  s->integer("conv_state_bytes_per_element", "bytes per conv-window element (bf16: 2)").at_least(1).at_most(8);
  s->integer("kv_lora_rank", "MLA compressed KV width").at_least(1).at_most(65536);
  s->integer("qk_rope_head_dim", "MLA decoupled RoPE key width").at_least(0).at_most(65536);
  s->integer("kv_bytes_per_element", "bytes per MLA KV element (bf16: 2)").at_least(1).at_most(8);
  s->integer("state_slots_per_request", "KDA states held per running request (1 without prefix cache or speculation)").at_least(1).at_most(64);
  return s;
}

std::shared_ptr<Schema> memory_schema() {
  auto s = std::make_shared<Schema>();
  s->integer("budget_bytes", "cache bytes per GPU shared by KDA states and MLA KV").at_least(1).at_most(1e15);
  s->integer("page_tokens", "MLA KV page size in tokens (fixed-split and unified)").at_least(1).at_most(65536);
  s->number("admission_watermark_fraction", "share of KV-capable memory an admission must leave free for decode growth").at_least(0).at_most(0.5);
  return s;
}

std::shared_ptr<Schema> service_schema() {
  auto s = std::make_shared<Schema>();
  s->number("decode_step_seconds", "simulated duration of one engine iteration (one decode token per running request)").above(0).at_most(10);
  s->integer("prefill_tokens_per_step", "prompt tokens one request prefills per iteration (chunked prefill)").at_least(1).at_most(1e7);
  return s;
}

std::shared_ptr<Schema> compaction_schema() {
  auto s = std::make_shared<Schema>();
  s->number("copy_bytes_per_second", "payload bandwidth of a device-to-device compaction copy; moved bytes stall the iteration by bytes / this").above(0).at_most(1e15);
  return s;
}

std::shared_ptr<Schema> policy_schema() {
  auto s = std::make_shared<Schema>();
  s->string("id", "policy id; must equal an arm id");
  s->string("kind", "allocator").one_of({"fixed-split", "unified", "padded-single-page"});
  s->number("state_to_kv_ratio",
            "fixed-split only: state pool / KV pool bytes (SGLang --mamba-full-memory-ratio); absent: tuned by "
            "parameters.fixed_split_tuning")
      .optional()
      .above(0)
      .at_most(100);
  s->string("compaction", "unified only: when live units move").optional().one_of({"on-shortfall", "eager"});
  s->integer("block_align_tokens", "padded-single-page only: attention block size alignment in tokens").optional().at_least(1).at_most(4096);
  return s;
}

std::shared_ptr<Schema> distribution_schema() {
  auto s = std::make_shared<Schema>();
  s->string("kind", "distribution family").one_of({"fixed", "uniform", "lognormal"});
  s->integer("value", "fixed: the token count").optional().at_least(0).at_most(4294967295.0);
  s->integer("min", "uniform: lower bound; lognormal: clamp").optional().at_least(0).at_most(4294967295.0);
  s->integer("max", "uniform: upper bound; lognormal: clamp").optional().at_least(0).at_most(4294967295.0);
  s->number("median", "lognormal: median token count (exp(mu))").optional().above(0).at_most(1e9);
  s->number("sigma", "lognormal: standard deviation of log tokens").optional().at_least(0).at_most(10);
  return s;
}

std::shared_ptr<Schema> arrival_schema() {
  auto s = std::make_shared<Schema>();
  s->string("process", "inter-arrival distribution").one_of({"poisson", "gamma"});
  s->number("rate_per_second", "mean arrivals per second").above(0).at_most(1e9);
  s->number("cv", "gamma only: coefficient of variation of inter-arrival gaps (1 = Poisson, > 1 bursty)").optional().above(0).at_most(100);
  return s;
}

std::shared_ptr<Schema> class_schema() {
  auto s = std::make_shared<Schema>();
  s->string("name", "request class name");
  s->number("weight", "relative share of the phase's arrivals").above(0).at_most(1e9);
  s->object("prompt_tokens", distribution_schema(), "prompt (context) length distribution");
  s->object("output_tokens", distribution_schema(), "generated length distribution");
  return s;
}

std::shared_ptr<Schema> phase_schema() {
  auto s = std::make_shared<Schema>();
  s->number("arrival_fraction", "share of the trace's arrivals in this phase (phases sum to 1)").above(0).at_most(1);
  s->object("arrival", arrival_schema(), "arrival process");
  s->array_of_objects("classes", class_schema(), "request classes").non_empty();
  return s;
}

std::shared_ptr<Schema> mix_schema() {
  auto s = std::make_shared<Schema>();
  s->string("id", "mix id used in unit ids");
  s->string("description", "what the mix represents");
  s->array_of_objects("phases", phase_schema(), "phases in trace order").non_empty();
  return s;
}

std::shared_ptr<Schema> retained_schema() {
  auto s = std::make_shared<Schema>();
  s->string("mix", "mix id");
  s->string("file", "the committed .k3tr file, relative to the repository root");
  s->string("sha256", "SHA-256 of the file's bytes (64 hex digits)");
  s->string("generator_seed", "the seed that generated it, 16 hex digits (stream_seed(seed, {mix index, 0}))");
  return s;
}

std::shared_ptr<Schema> tuning_schema() {
  auto s = std::make_shared<Schema>();
  s->array_of("ratios", FieldType::Number, "candidate state:KV ratios, strictly increasing")
      .non_empty()
      .above(0)
      .at_most(100);
  s->integer("calibration_traces_per_mix", "calibration traces per mix (first phase only, their own seed stream)")
      .at_least(1)
      .at_most(1000);
  s->integer("arrivals_per_calibration_trace", "arrivals in every calibration trace").at_least(1).at_most(1e8);
  return s;
}

std::shared_ptr<Schema> sensitivity_schema() {
  auto s = std::make_shared<Schema>();
  s->array_of("copy_bytes_per_second", FieldType::Number,
              "compaction bandwidths for the unified arm's sensitivity units on each retained trace")
      .non_empty()
      .above(0)
      .at_most(1e15);
  return s;
}

Schema make_parameter_schema() {
  Schema s;
  s.integer("seed", "protocol seed; trace t of mix m uses core::stream_seed(seed, {m, t})").at_least(0).at_most(9007199254740991.0);
  s.object("model", model_schema(), "hybrid model config the sizes derive from");
  s.object("memory", memory_schema(), "memory budget and page size");
  s.object("service", service_schema(), "service-time model");
  s.object("compaction", compaction_schema(), "compaction cost model");
  s.array_of_objects("policies", policy_schema(), "admission policies (one per arm)").non_empty();
  s.array_of_objects("mixes", mix_schema(), "workload mixes").non_empty();
  s.integer("seeded_traces_per_mix", "seeded traces per mix, besides the retained one").at_least(1).at_most(1000);
  s.integer("arrivals_per_trace", "arrivals in every trace").at_least(1).at_most(1e8);
  s.number("drain_factor", "after the last arrival, draining may last this many trace durations; then queued requests are misses").at_least(0).at_most(100);
  s.integer("time_series_points", "samples over the arrival window in the retained trace's time series").at_least(10).at_most(1000);
  s.array_of_objects("retained_traces", retained_schema(), "one committed trace per mix").non_empty();
  s.object("fixed_split_tuning", tuning_schema(), "protocol v2: how the fixed split's ratio is chosen per mix")
      .optional();
  s.object("sensitivity", sensitivity_schema(), "protocol v2: compaction-bandwidth sensitivity of the unified arm")
      .optional();
  return s;
}

std::string hex16(std::uint64_t v) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

class Collector {
 public:
  void add(const std::string& path, const std::string& message) { issues_.push_back(path + ": " + message); }
  void throw_if_any() const {
    if (issues_.empty()) return;
    std::ostringstream out;
    out << "memory-pool parameters: " << issues_.size() << " problem(s)";
    for (const auto& i : issues_) out << "\n  " << i;
    throw std::invalid_argument(out.str());
  }

 private:
  std::vector<std::string> issues_;
};

LengthDistribution parse_distribution(const json& j, const std::string& path, Collector& c) {
  LengthDistribution d;
  const std::string kind = j.at("kind").get<std::string>();
  auto require = [&](const char* key) {
    if (!j.contains(key)) c.add(path + "." + key, std::string("required for kind \"") + kind + "\"");
  };
  auto forbid = [&](const char* key) {
    if (j.contains(key)) c.add(path + "." + key, std::string("not used by kind \"") + kind + "\"; remove it");
  };
  auto u32 = [&](const char* key) { return j.contains(key) ? j.at(key).get<std::uint32_t>() : 0u; };
  if (kind == "fixed") {
    d.kind = LengthDistribution::Kind::Fixed;
    require("value");
    for (const char* k : {"min", "max", "median", "sigma"}) forbid(k);
    d.value = u32("value");
  } else if (kind == "uniform") {
    d.kind = LengthDistribution::Kind::Uniform;
    require("min");
    require("max");
    for (const char* k : {"value", "median", "sigma"}) forbid(k);
    d.min = u32("min");
    d.max = u32("max");
  } else {
    d.kind = LengthDistribution::Kind::LogNormal;
    for (const char* k : {"median", "sigma", "min", "max"}) require(k);
    forbid("value");
    d.min = u32("min");
    d.max = u32("max");
    d.median = j.value("median", 0.0);
    d.sigma = j.value("sigma", 0.0);
  }
  if (d.kind != LengthDistribution::Kind::Fixed && d.min > d.max) c.add(path, "min must not exceed max");
  return d;
}

}  // namespace

const core::Schema& parameter_schema() {
  static const Schema schema = make_parameter_schema();
  return schema;
}

std::size_t SimParameters::mix_index(const std::string& id) const {
  std::string known;
  for (std::size_t i = 0; i < mixes.size(); ++i) {
    if (mixes[i].id == id) return i;
    known += (known.empty() ? "" : ", ") + mixes[i].id;
  }
  throw std::invalid_argument("unknown mix \"" + id + "\"; the protocol defines: " + known);
}

std::size_t SimParameters::policy_index(const std::string& id) const {
  std::string known;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    if (policies[i].id == id) return i;
    known += (known.empty() ? "" : ", ") + policies[i].id;
  }
  throw std::invalid_argument("unknown policy \"" + id + "\"; the protocol defines: " + known);
}

const RetainedTraceSpec& SimParameters::retained_for(const std::string& mix) const {
  for (const auto& r : retained_traces) {
    if (r.mix == mix) return r;
  }
  throw std::invalid_argument("no retained trace for mix \"" + mix + "\"; add it to parameters.retained_traces");
}

namespace {

void throw_parameter_issues(const json& j) {
  const auto issues = parameter_schema().validate(j, "parameters");
  core::throw_schema_issues("memory-pool parameters: " + std::to_string(issues.size()) + " problem(s)", issues);
}

HybridModelConfig parse_model(const json& m, Collector& c) {
  HybridModelConfig model;
  model.name = m.at("name").get<std::string>();
  model.kda_layers = m.at("kda_layers").get<std::uint32_t>();
  model.mla_layers = m.at("mla_layers").get<std::uint32_t>();
  model.kda_heads = m.at("kda_heads").get<std::uint32_t>();
  model.kda_head_dim = m.at("kda_head_dim").get<std::uint32_t>();
  model.kda_conv_kernel = m.at("kda_conv_kernel").get<std::uint32_t>();
  model.tensor_parallel = m.at("tensor_parallel").get<std::uint32_t>();
  model.ssm_state_bytes_per_element = m.at("ssm_state_bytes_per_element").get<std::uint32_t>();
  model.conv_state_bytes_per_element = m.at("conv_state_bytes_per_element").get<std::uint32_t>();
  model.kv_lora_rank = m.at("kv_lora_rank").get<std::uint32_t>();
  model.qk_rope_head_dim = m.at("qk_rope_head_dim").get<std::uint32_t>();
  model.kv_bytes_per_element = m.at("kv_bytes_per_element").get<std::uint32_t>();
  model.state_slots_per_request = m.at("state_slots_per_request").get<std::uint32_t>();
  try {
    model.validate();
  } catch (const std::invalid_argument& e) {
    c.add("parameters", e.what());
  }
  return model;
}

// Memory, service, compaction and trace-shape scalars.
void parse_scalars(const json& j, SimParameters& p, Collector& c) {
  const json& mem = j.at("memory");
  p.budget_bytes = mem.at("budget_bytes").get<Bytes>();
  p.page_tokens = mem.at("page_tokens").get<std::uint32_t>();
  p.watermark_fraction = mem.at("admission_watermark_fraction").get<double>();
  p.decode_step_seconds = j.at("service").at("decode_step_seconds").get<double>();
  p.prefill_tokens_per_step = j.at("service").at("prefill_tokens_per_step").get<std::uint32_t>();
  p.copy_bytes_per_second = j.at("compaction").at("copy_bytes_per_second").get<double>();
  p.seeded_traces_per_mix = j.at("seeded_traces_per_mix").get<std::uint32_t>();
  p.arrivals_per_trace = j.at("arrivals_per_trace").get<std::uint64_t>();
  p.drain_factor = j.at("drain_factor").get<double>();
  p.time_series_points = j.at("time_series_points").get<std::uint32_t>();
  if (std::llround(p.decode_step_seconds * 1e6) < 1) c.add("parameters.service.decode_step_seconds", "must be at least one microsecond");
}

void parse_policies(const json& policies, SimParameters& p, Collector& c) {
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const json& pj = policies[i];
    const std::string at = "parameters.policies[" + std::to_string(i) + "]";
    PolicySpec spec;
    spec.id = pj.at("id").get<std::string>();
    spec.kind = parse_policy_kind(pj.at("kind").get<std::string>());
    auto only_for = [&](const char* key, PolicyKind kind) {
      const bool present = pj.contains(key);
      if (spec.kind == kind && !present) c.add(at + "." + key, "required for kind " + policy_kind_name(kind));
      if (spec.kind != kind && present) c.add(at + "." + key, "only used by kind " + policy_kind_name(kind) + "; remove it");
    };
    if (spec.kind == PolicyKind::FixedSplit) {
      spec.tuned_ratio = !pj.contains("state_to_kv_ratio");
    } else if (pj.contains("state_to_kv_ratio")) {
      c.add(at + ".state_to_kv_ratio", "only used by kind fixed-split; remove it");
    }
    only_for("compaction", PolicyKind::Unified);
    only_for("block_align_tokens", PolicyKind::PaddedSinglePage);
    if (pj.contains("state_to_kv_ratio")) spec.state_to_kv_ratio = pj.at("state_to_kv_ratio").get<double>();
    if (pj.contains("compaction")) spec.compaction = parse_compaction_mode(pj.at("compaction").get<std::string>());
    if (pj.contains("block_align_tokens")) spec.block_align_tokens = pj.at("block_align_tokens").get<std::uint32_t>();
    for (const auto& other : p.policies) {
      if (other.id == spec.id) c.add(at + ".id", "duplicate policy id \"" + spec.id + "\"");
    }
    p.policies.push_back(spec);
  }
}

Phase parse_phase(const json& ph, const std::string& pat, Collector& c) {
  Phase phase;
  phase.arrival_fraction = ph.at("arrival_fraction").get<double>();
  const json& a = ph.at("arrival");
  const std::string process = a.at("process").get<std::string>();
  phase.arrival.kind = process == "gamma" ? ArrivalProcess::Kind::Gamma : ArrivalProcess::Kind::Poisson;
  phase.arrival.rate_per_second = a.at("rate_per_second").get<double>();
  if (process == "gamma") {
    if (!a.contains("cv")) c.add(pat + ".arrival.cv", "required for a gamma process (1 = Poisson, > 1 bursty)");
    else phase.arrival.cv = a.at("cv").get<double>();
  } else if (a.contains("cv")) {
    c.add(pat + ".arrival.cv", "a poisson process has cv 1 by definition; remove it or use process gamma");
  }
  const json& classes = ph.at("classes");
  for (std::size_t q = 0; q < classes.size(); ++q) {
    const json& cj = classes[q];
    const std::string cat = pat + ".classes[" + std::to_string(q) + "]";
    RequestClass rc;
    rc.name = cj.at("name").get<std::string>();
    rc.weight = cj.at("weight").get<double>();
    rc.prompt_tokens = parse_distribution(cj.at("prompt_tokens"), cat + ".prompt_tokens", c);
    rc.output_tokens = parse_distribution(cj.at("output_tokens"), cat + ".output_tokens", c);
    phase.classes.push_back(rc);
  }
  return phase;
}

void parse_mixes(const json& mixes, SimParameters& p, Collector& c) {
  for (std::size_t i = 0; i < mixes.size(); ++i) {
    const json& mj = mixes[i];
    const std::string at = "parameters.mixes[" + std::to_string(i) + "]";
    MixSpec mix;
    mix.id = mj.at("id").get<std::string>();
    mix.description = mj.at("description").get<std::string>();
    for (const auto& other : p.mixes) {
      if (other.id == mix.id) c.add(at + ".id", "duplicate mix id \"" + mix.id + "\"");
    }
    const json& phases = mj.at("phases");
    for (std::size_t k = 0; k < phases.size(); ++k) {
      mix.phases.push_back(parse_phase(phases[k], at + ".phases[" + std::to_string(k) + "]", c));
    }
    try {
      mix.validate();
    } catch (const std::invalid_argument& e) {
      c.add(at, e.what());
    }
    p.mixes.push_back(mix);
  }
}

void parse_retained_traces(const json& retained, SimParameters& p, Collector& c) {
  for (std::size_t i = 0; i < retained.size(); ++i) {
    const json& rj = retained[i];
    const std::string at = "parameters.retained_traces[" + std::to_string(i) + "]";
    RetainedTraceSpec r;
    r.mix = rj.at("mix").get<std::string>();
    r.file = rj.at("file").get<std::string>();
    r.sha256 = rj.at("sha256").get<std::string>();
    const std::string seed_text = rj.at("generator_seed").get<std::string>();
    bool hex_ok = r.sha256.size() == 64 && r.sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex_ok) c.add(at + ".sha256", "must be 64 lowercase hex digits (the file's SHA-256)");
    if (seed_text.size() != 16 || seed_text.find_first_not_of("0123456789abcdef") != std::string::npos) {
      c.add(at + ".generator_seed", "must be 16 lowercase hex digits");
    } else {
      r.generator_seed = std::stoull(seed_text, nullptr, 16);
    }
    for (const auto& other : p.retained_traces) {
      if (other.mix == r.mix) c.add(at + ".mix", "mix \"" + r.mix + "\" already has a retained trace");
    }
    p.retained_traces.push_back(r);
  }
}

// Every mix has one retained trace, generated from the seed its mix index gives.
void check_retained_traces(const SimParameters& p, Collector& c) {
  for (std::size_t i = 0; i < p.mixes.size(); ++i) {
    bool found = false;
    for (const auto& r : p.retained_traces) found = found || r.mix == p.mixes[i].id;
    if (!found) c.add("parameters.retained_traces", "no entry for mix \"" + p.mixes[i].id + "\"; every mix needs its retained trace");
  }
  for (std::size_t i = 0; i < p.retained_traces.size(); ++i) {
    const auto& r = p.retained_traces[i];
    bool known = false;
    for (std::size_t m = 0; m < p.mixes.size(); ++m) {
      if (p.mixes[m].id != r.mix) continue;
      known = true;
      const std::uint64_t expected = trace_seed(p, m, 0);
      if (r.generator_seed != expected) {
        c.add("parameters.retained_traces[" + std::to_string(i) + "].generator_seed",
              "is " + hex16(r.generator_seed) + " but stream_seed(seed, {" + std::to_string(m) + ", 0}) is " +
                  hex16(expected) + "; regenerate the retained trace for this seed");
      }
    }
    if (!known) c.add("parameters.retained_traces[" + std::to_string(i) + "].mix", "no mix \"" + r.mix + "\"");
  }
}

// Protocol v2 blocks: the fixed split is tuned exactly when its ratio is absent, and the tuning needs a
// tuned fixed split; the sensitivity needs a unified arm.
void parse_v2_blocks(const json& j, SimParameters& p, Collector& c) {
  bool any_tuned = false, any_unified = false;
  for (const auto& policy : p.policies) {
    any_tuned = any_tuned || policy.tuned_ratio;
    any_unified = any_unified || policy.kind == PolicyKind::Unified;
  }
  if (j.contains("fixed_split_tuning")) {
    const json& t = j.at("fixed_split_tuning");
    FixedSplitTuning tuning;
    tuning.ratios = t.at("ratios").get<std::vector<double>>();
    tuning.calibration_traces_per_mix = t.at("calibration_traces_per_mix").get<std::uint32_t>();
    tuning.arrivals_per_calibration_trace = t.at("arrivals_per_calibration_trace").get<std::uint64_t>();
    for (std::size_t i = 1; i < tuning.ratios.size(); ++i) {
      if (!(tuning.ratios[i] > tuning.ratios[i - 1])) {
        c.add("parameters.fixed_split_tuning.ratios[" + std::to_string(i) + "]", "ratios must be strictly increasing");
      }
    }
    if (!any_tuned) {
      c.add("parameters.fixed_split_tuning",
            "no fixed-split policy is tuned (each states a state_to_kv_ratio); remove "
            "the ratio to tune the split, or remove this block");
    }
    p.fixed_split_tuning = tuning;
  }
  for (std::size_t i = 0; i < p.policies.size(); ++i) {
    if (p.policies[i].tuned_ratio && !p.fixed_split_tuning) {
      c.add("parameters.policies[" + std::to_string(i) + "].state_to_kv_ratio",
            "required unless parameters.fixed_split_tuning says how the ratio is chosen");
    }
    if (!p.policies[i].tuned_ratio && p.policies[i].kind == PolicyKind::FixedSplit && p.fixed_split_tuning) {
      c.add("parameters.policies[" + std::to_string(i) + "].state_to_kv_ratio",
            "a fixed ratio and parameters.fixed_split_tuning exclude each other; remove one");
    }
  }
  if (j.contains("sensitivity")) {
    p.sensitivity_copy_bytes_per_second = j.at("sensitivity").at("copy_bytes_per_second").get<std::vector<double>>();
    if (!any_unified) c.add("parameters.sensitivity", "needs a unified policy to vary the copy bandwidth of");
  }
}

}  // namespace

SimParameters parse_parameters(const json& j) {
  throw_parameter_issues(j);
  Collector c;
  SimParameters p;
  p.seed = j.at("seed").get<std::uint64_t>();
  p.model = parse_model(j.at("model"), c);
  parse_scalars(j, p, c);
  parse_policies(j.at("policies"), p, c);
  parse_v2_blocks(j, p, c);
  parse_mixes(j.at("mixes"), p, c);
  parse_retained_traces(j.at("retained_traces"), p, c);
  check_retained_traces(p, c);
  c.throw_if_any();
  return p;
}

PolicyConfig policy_config(const SimParameters& p, const PolicySpec& policy) {
  const Bytes state = p.model.state_bytes_per_request();
  const Bytes page = p.model.mla_bytes_per_token() * p.page_tokens;
  PolicyConfig config;
  config.kind = policy.kind;
  switch (policy.kind) {
    case PolicyKind::FixedSplit:
      if (policy.tuned_ratio) {
        throw std::invalid_argument("fixed-split policy \"" + policy.id +
                                    "\" is tuned: its ratio is chosen from the calibration units; pass the chosen "
                                    "ratio with with_ratio()");
      }
      config.fixed = FixedSplitPool::split(p.budget_bytes, state, page, p.page_tokens, policy.state_to_kv_ratio,
                                           p.watermark_fraction);
      break;
    case PolicyKind::Unified:
      config.unified.total_bytes = p.budget_bytes;
      config.unified.state_bytes = state;
      config.unified.page_bytes = page;
      config.unified.page_tokens = p.page_tokens;
      config.unified.watermark_bytes =
          static_cast<Bytes>(std::ceil(p.watermark_fraction * static_cast<double>(p.budget_bytes)));
      config.unified.compaction = policy.compaction;
      break;
    case PolicyKind::PaddedSinglePage: {
      const PaddedLayout layout = padded_layout(p.model, policy.block_align_tokens);
      config.padded.budget_bytes = p.budget_bytes;
      config.padded.block_tokens = layout.block_tokens;
      config.padded.block_bytes = layout.block_bytes;
      config.padded.state_blocks = layout.state_groups;
      config.padded.kv_groups = layout.kv_groups;
      config.padded.total_blocks = static_cast<std::uint32_t>(p.budget_bytes / layout.block_bytes);
      config.padded.watermark_blocks =
          static_cast<std::uint32_t>(std::ceil(p.watermark_fraction * config.padded.total_blocks));
      break;
    }
  }
  return config;
}

PolicySpec with_ratio(PolicySpec policy, double ratio) {
  policy.state_to_kv_ratio = ratio;
  policy.tuned_ratio = false;
  return policy;
}

EngineConfig engine_config(const SimParameters& p, bool with_time_series) {
  EngineConfig e;
  e.step_us = std::llround(p.decode_step_seconds * 1e6);
  e.prefill_tokens_per_step = p.prefill_tokens_per_step;
  e.drain_factor = p.drain_factor;
  e.copy_bytes_per_second = p.copy_bytes_per_second;
  e.time_series_points = with_time_series ? p.time_series_points : 0;
  e.reference_state_bytes = p.model.state_bytes_per_request();
  e.reference_page_tokens = p.page_tokens;
  e.reference_page_bytes = p.model.mla_bytes_per_token() * p.page_tokens;
  e.reference_watermark_bytes = static_cast<Bytes>(std::ceil(p.watermark_fraction * static_cast<double>(p.budget_bytes)));
  return e;
}

json policy_geometry_json(const PolicyConfig& config) {
  json g;
  g["kind"] = policy_kind_name(config.kind);
  switch (config.kind) {
    case PolicyKind::FixedSplit: {
      const auto& f = config.fixed;
      g["state_slots"] = f.state_slots;
      g["kv_pages"] = f.kv_pages;
      g["kv_tokens"] = static_cast<std::uint64_t>(f.kv_pages) * f.page_tokens;
      g["state_pool_bytes"] = f.state_pool_bytes();
      g["kv_pool_bytes"] = f.kv_pool_bytes();
      g["rounding_bytes"] = f.rounding_bytes();
      g["watermark_pages"] = f.watermark_pages;
      break;
    }
    case PolicyKind::Unified: {
      const auto& u = config.unified;
      g["arena_bytes"] = u.total_bytes;
      g["state_bytes"] = u.state_bytes;
      g["page_bytes"] = u.page_bytes;
      g["watermark_bytes"] = u.watermark_bytes;
      g["compaction"] = compaction_mode_name(u.compaction);
      break;
    }
    case PolicyKind::PaddedSinglePage: {
      const auto& d = config.padded;
      g["block_tokens"] = d.block_tokens;
      g["block_bytes"] = d.block_bytes;
      g["state_blocks_per_request"] = d.state_blocks;
      g["kv_groups"] = d.kv_groups;
      g["total_blocks"] = d.total_blocks;
      g["pool_bytes"] = d.pool_bytes();
      g["rounding_bytes"] = d.budget_bytes - d.pool_bytes();
      g["watermark_blocks"] = d.watermark_blocks;
      break;
    }
  }
  return g;
}

json derived_sizes(const SimParameters& p) {
  json d;
  d["kda_state_bytes_per_layer"] = p.model.kda_state_bytes_per_layer();
  d["state_bytes_per_request"] = p.model.state_bytes_per_request();
  d["mla_bytes_per_token"] = p.model.mla_bytes_per_token();
  d["page_bytes"] = p.model.mla_bytes_per_token() * p.page_tokens;
  d["state_in_mla_tokens"] = static_cast<double>(p.model.state_bytes_per_request()) /
                             static_cast<double>(p.model.mla_bytes_per_token());
  d["budget_bytes"] = p.budget_bytes;
  json policies = json::object();
  for (const auto& policy : p.policies) {
    if (!policy.tuned_ratio) {
      policies[policy.id] = policy_geometry_json(policy_config(p, policy));
      continue;
    }
    json candidates = json::array();
    for (double ratio : p.fixed_split_tuning->ratios) {
      json g = policy_geometry_json(policy_config(p, with_ratio(policy, ratio)));
      g["state_to_kv_ratio"] = ratio;
      candidates.push_back(std::move(g));
    }
    policies[policy.id] = {{"kind", policy_kind_name(policy.kind)}, {"tuned", true}, {"candidates", candidates}};
  }
  d["policies"] = policies;
  return d;
}

std::uint64_t trace_seed(const SimParameters& p, std::size_t mix_index, std::size_t trace_index) {
  return core::stream_seed(p.seed, {static_cast<std::uint64_t>(mix_index), static_cast<std::uint64_t>(trace_index)});
}

std::string seed_hex(std::uint64_t seed) { return hex16(seed); }

std::string trace_label(std::size_t trace_index) {
  if (trace_index == 0) return "retained";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "seeded-%02zu", trace_index);
  return buffer;
}

std::string trace_source_text(const SimParameters& p, std::size_t mix_index, std::size_t trace_index) {
  return "k3lab memory-pool workload v1 mix=" + p.mixes.at(mix_index).id + " trace=" + trace_label(trace_index);
}

Trace generate_protocol_trace(const SimParameters& p, std::size_t mix_index, std::size_t trace_index) {
  return generate_trace(p.mixes.at(mix_index), p.arrivals_per_trace, trace_seed(p, mix_index, trace_index),
                        trace_source_text(p, mix_index, trace_index));
}

}  // namespace k3lab::sim
