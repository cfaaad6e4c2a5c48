#include <k3lab/models/model_config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace k3lab::models {

using nlohmann::json;

std::string to_string(FfnKind kind) { return kind == FfnKind::SwiGlu ? "swiglu" : "situ_glu"; }

FfnKind ffn_kind_from_string(const std::string& name) {
  if (name == "swiglu") return FfnKind::SwiGlu;
  if (name == "situ_glu") return FfnKind::SituGlu;
  throw std::invalid_argument("unknown feed-forward kind '" + name + "': use swiglu or situ_glu");
}

std::string to_string(ResidualMode mode) {
  switch (mode) {
    case ResidualMode::Standard: return "standard";
    case ResidualMode::FullAttnRes: return "full_attn_res";
    case ResidualMode::BlockAttnRes: return "block_attn_res";
  }
  return "unknown";
}

ResidualMode residual_mode_from_string(const std::string& name) {
  for (auto mode : {ResidualMode::Standard, ResidualMode::FullAttnRes, ResidualMode::BlockAttnRes}) {
    if (name == to_string(mode)) return mode;
  }
  throw std::invalid_argument("unknown residual mode '" + name + "': use standard, full_attn_res or block_attn_res");
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Reads one JSON object, naming fields by their dotted path in every error.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw std::invalid_argument(path_ + ": expected a JSON object");
  }

  const json* find(const std::string& key, bool required) {
    known_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) throw std::invalid_argument(field(key) + ": required field is missing");
      return nullptr;
    }
    return &*it;
  }

  void read(const std::string& key, std::int64_t& out, bool required = false) {
    if (const json* v = find(key, required)) {
      if (!v->is_number_integer()) throw std::invalid_argument(field(key) + ": expected an integer, got " + v->dump());
      out = v->get<std::int64_t>();
    }
  }
  void read(const std::string& key, double& out) {
    if (const json* v = find(key, false)) {
      if (!v->is_number()) throw std::invalid_argument(field(key) + ": expected a number, got " + v->dump());
      out = v->get<double>();
    }
  }
  void read(const std::string& key, std::optional<double>& out) {
    if (const json* v = find(key, false)) {
      if (v->is_null()) {
        out.reset();
      } else if (v->is_number()) {
        out = v->get<double>();
      } else {
        throw std::invalid_argument(field(key) + ": expected a number or null, got " + v->dump());
      }
    }
  }
  void read(const std::string& key, bool& out) {
    if (const json* v = find(key, false)) {
      if (!v->is_boolean()) throw std::invalid_argument(field(key) + ": expected true or false, got " + v->dump());
      out = v->get<bool>();
    }
  }
  void read(const std::string& key, std::string& out, bool required = false) {
    if (const json* v = find(key, required)) {
      if (!v->is_string()) throw std::invalid_argument(field(key) + ": expected a string, got " + v->dump());
      out = v->get<std::string>();
    }
  }
  template <typename Enum, typename Parse>
  void read_enum(const std::string& key, Enum& out, Parse parse) {
    std::string name;
    if (find(key, false) == nullptr) return;
    read(key, name);
    try {
      out = parse(name);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(field(key) + ": " + e.what());
    }
  }
  const json* section(const std::string& key, bool required = false) { return find(key, required); }

  // Unknown keys are errors, with the closest known key as a suggestion.
  void finish() const {
    for (const auto& item : j_.items()) {
      if (known_.count(item.key())) continue;
      std::string best;
      std::size_t best_distance = 3;
      for (const auto& k : known_) {
        const auto d = edit_distance(item.key(), k);
        if (d < best_distance) {
          best_distance = d;
          best = k;
        }
      }
      throw std::invalid_argument(field(item.key()) + ": unknown key" +
                                  (best.empty() ? "" : " (did you mean '" + best + "'?)"));
    }
  }

  std::string field(const std::string& key) const { return path_ + "." + key; }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> known_;
};

void require(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument("model." + field + " " + what);
}

}  // namespace

void ModelConfig::validate() const {
  require(vocab_size > 0, "vocab_size", "must be positive (got " + std::to_string(vocab_size) + ")");
  require(hidden_size > 0, "hidden_size", "must be positive (got " + std::to_string(hidden_size) + ")");
  MixerCounts counts;
  try {
    counts = count_mixers(schedule);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("model.schedule: ") + e.what());
  }
  if (counts.kda > 0) {
    require(kda.num_heads > 0, "kda.num_heads", "must be positive");
    require(kda.head_dim > 0, "kda.head_dim", "must be positive");
    require(kda.conv_kernel >= 1, "kda.conv_kernel", "must be >= 1 (fla uses 4)");
    require(kda.gate_rank >= 0, "kda.gate_rank", "must be >= 0 (0 means head_dim)");
    require(kda.chunk_size > 0 && (kda.chunk_size <= 16 || kda.chunk_size % 16 == 0), "kda.chunk_size",
            "must be <= 16 or a multiple of 16 (e.g. 64), got " + std::to_string(kda.chunk_size));
    require(!kda.gate_lower_bound || (std::isfinite(*kda.gate_lower_bound) && *kda.gate_lower_bound < 0.0),
            "kda.gate_lower_bound", "must be finite and < 0 (K3: -5), or null for the softplus gate");
  }
  if (counts.mla > 0) {
    require(mla.num_heads > 0, "mla.num_heads", "must be positive");
    require(mla.q_lora_rank >= 0, "mla.q_lora_rank", "must be >= 0 (0: full-rank query)");
    require(mla.kv_lora_rank > 0, "mla.kv_lora_rank", "must be positive");
    require(mla.qk_nope_head_dim > 0, "mla.qk_nope_head_dim", "must be positive");
    require(mla.qk_rope_head_dim >= 0, "mla.qk_rope_head_dim", "must be >= 0");
    require(mla.v_head_dim > 0, "mla.v_head_dim", "must be positive");
  }
  if (counts.attention > 0) {
    require(attention.num_heads > 0, "attention.num_heads", "must be positive");
    require(attention.head_dim > 0, "attention.head_dim", "must be positive");
    require(attention.rope_theta >= 0.0, "attention.rope_theta", "must be >= 0 (0: NoPE)");
    require(attention.rope_theta == 0.0 || attention.head_dim % 2 == 0, "attention.head_dim",
            "must be even when rope_theta > 0");
  }
  require(ffn.intermediate_size > 0, "ffn.intermediate_size",
          "must be positive (set it, or use match_parameters to derive it from a parameter target)");
  require(ffn.situ_beta_gate > 0.0 && std::isfinite(ffn.situ_beta_gate), "ffn.situ_beta_gate", "must be finite and > 0");
  require(ffn.situ_beta_up > 0.0 && std::isfinite(ffn.situ_beta_up), "ffn.situ_beta_up", "must be finite and > 0");
  require(ffn.quant.block_size > 0, "ffn.quant.block_size", "must be positive (MX uses 32)");
  if (ffn.quant.enabled()) {
    require(hidden_size % ffn.quant.block_size == 0, "hidden_size",
            "must be divisible by ffn.quant.block_size when MX quantisation is on");
    require(ffn.intermediate_size % ffn.quant.block_size == 0, "ffn.intermediate_size",
            "must be divisible by ffn.quant.block_size when MX quantisation is on");
  }
  require(norm_eps > 0.0, "norm_eps", "must be > 0");
  require(residual.block_size >= 1, "residual.block_size", "must be >= 1 (decoder layers per AttnRes block; K3 uses 12)");
}

void to_json(json& j, const ModelConfig& c) {
  j = json{
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"schedule", c.schedule},
      {"kda",
       {{"num_heads", c.kda.num_heads},
        {"head_dim", c.kda.head_dim},
        {"conv_kernel", c.kda.conv_kernel},
        {"gate_lower_bound", c.kda.gate_lower_bound ? json(*c.kda.gate_lower_bound) : json(nullptr)},
        {"gate_rank", c.kda.gate_rank},
        {"full_rank_output_gate", c.kda.full_rank_output_gate},
        {"chunk_size", c.kda.chunk_size}}},
      {"mla",
       {{"num_heads", c.mla.num_heads},
        {"q_lora_rank", c.mla.q_lora_rank},
        {"kv_lora_rank", c.mla.kv_lora_rank},
        {"qk_nope_head_dim", c.mla.qk_nope_head_dim},
        {"qk_rope_head_dim", c.mla.qk_rope_head_dim},
        {"v_head_dim", c.mla.v_head_dim},
        {"output_gate", c.mla.output_gate}}},
      {"attention",
       {{"num_heads", c.attention.num_heads},
        {"head_dim", c.attention.head_dim},
        {"rope_theta", c.attention.rope_theta}}},
      {"ffn",
       {{"kind", to_string(c.ffn.kind)},
        {"intermediate_size", c.ffn.intermediate_size},
        {"situ_beta_gate", c.ffn.situ_beta_gate},
        {"situ_beta_up", c.ffn.situ_beta_up},
        {"quant",
         {{"weights", to_string(c.ffn.quant.weights)},
          {"activations", to_string(c.ffn.quant.activations)},
          {"block_size", c.ffn.quant.block_size}}}}},
      {"norm_eps", c.norm_eps},
      {"tie_embeddings", c.tie_embeddings},
      {"residual", {{"mode", to_string(c.residual.mode)}, {"block_size", c.residual.block_size}}},
  };
}

void from_json(const json& j, ModelConfig& c) {
  ModelConfig out;
  ObjectReader top(j, "model");
  top.read("vocab_size", out.vocab_size, /*required=*/true);
  top.read("hidden_size", out.hidden_size, /*required=*/true);
  top.read("schedule", out.schedule, /*required=*/true);
  top.read("norm_eps", out.norm_eps);
  top.read("tie_embeddings", out.tie_embeddings);
  if (const json* s = top.section("kda")) {
    ObjectReader r(*s, "model.kda");
    r.read("num_heads", out.kda.num_heads);
    r.read("head_dim", out.kda.head_dim);
    r.read("conv_kernel", out.kda.conv_kernel);
    r.read("gate_lower_bound", out.kda.gate_lower_bound);
    r.read("gate_rank", out.kda.gate_rank);
    r.read("full_rank_output_gate", out.kda.full_rank_output_gate);
    r.read("chunk_size", out.kda.chunk_size);
    r.finish();
  }
  if (const json* s = top.section("mla")) {
    ObjectReader r(*s, "model.mla");
    r.read("num_heads", out.mla.num_heads);
    r.read("q_lora_rank", out.mla.q_lora_rank);
    r.read("kv_lora_rank", out.mla.kv_lora_rank);
    r.read("qk_nope_head_dim", out.mla.qk_nope_head_dim);
    r.read("qk_rope_head_dim", out.mla.qk_rope_head_dim);
    r.read("v_head_dim", out.mla.v_head_dim);
    r.read("output_gate", out.mla.output_gate);
    r.finish();
  }
  if (const json* s = top.section("attention")) {
    ObjectReader r(*s, "model.attention");
    r.read("num_heads", out.attention.num_heads);
    r.read("head_dim", out.attention.head_dim);
    r.read("rope_theta", out.attention.rope_theta);
    r.finish();
  }
  const json* ffn = top.section("ffn", /*required=*/true);
  {
    ObjectReader r(*ffn, "model.ffn");
    r.read_enum("kind", out.ffn.kind, ffn_kind_from_string);
    r.read("intermediate_size", out.ffn.intermediate_size, /*required=*/true);
    r.read("situ_beta_gate", out.ffn.situ_beta_gate);
    r.read("situ_beta_up", out.ffn.situ_beta_up);
    if (const json* q = r.section("quant")) {
      ObjectReader rq(*q, "model.ffn.quant");
      rq.read_enum("weights", out.ffn.quant.weights, mx_element_from_string);
      rq.read_enum("activations", out.ffn.quant.activations, mx_element_from_string);
      rq.read("block_size", out.ffn.quant.block_size);
      rq.finish();
    }
    r.finish();
  }
  if (const json* s = top.section("residual")) {
    ObjectReader r(*s, "model.residual");
    r.read_enum("mode", out.residual.mode, residual_mode_from_string);
    r.read("block_size", out.residual.block_size);
    r.finish();
  }
  top.finish();
  out.validate();
  c = std::move(out);
}

}  // namespace k3lab::models
