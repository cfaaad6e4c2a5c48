#include "k3lab/train/throughput_record.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>

namespace k3lab::train {
namespace {

constexpr const char* kRecordKind = "k3lab-train-throughput";
constexpr int kRecordVersion = 1;

const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) throw std::invalid_argument(std::string("missing field \"") + name + "\"");
  return j.at(name);
}

std::int64_t positive_integer(const nlohmann::json& j, const char* name) {
  const auto& v = field(j, name);
  if (!v.is_number_integer() || v.get<std::int64_t>() <= 0) {
    throw std::invalid_argument(std::string("field \"") + name + "\" must be a positive integer, not " + v.dump());
  }
  return v.get<std::int64_t>();
}

std::string text(const nlohmann::json& j, const char* name) {
  const auto& v = field(j, name);
  if (!v.is_string()) throw std::invalid_argument(std::string("field \"") + name + "\" must be a string");
  return v.get<std::string>();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

nlohmann::json ThroughputShape::to_json() const {
  return {{"schedule", schedule},
          {"d_model", d_model},
          {"n_heads", n_heads},
          {"head_dim", head_dim},
          {"mla_kv_latent_dim", mla_kv_latent_dim},
          {"kda_chunk_size", kda_chunk_size},
          {"ffn_size", ffn_size},
          {"vocab_size", vocab_size},
          {"sequence_length", sequence_length},
          {"batch_rows", batch_rows},
          {"dtype", dtype}};
}

ThroughputShape ThroughputShape::from_json(const nlohmann::json& j) {
  ThroughputShape s;
  s.schedule = text(j, "schedule");
  if (s.schedule.empty()) throw std::invalid_argument("field \"schedule\" must not be empty");
  s.d_model = positive_integer(j, "d_model");
  s.n_heads = positive_integer(j, "n_heads");
  s.head_dim = positive_integer(j, "head_dim");
  s.mla_kv_latent_dim = positive_integer(j, "mla_kv_latent_dim");
  s.kda_chunk_size = positive_integer(j, "kda_chunk_size");
  s.ffn_size = positive_integer(j, "ffn_size");
  s.vocab_size = positive_integer(j, "vocab_size");
  s.sequence_length = positive_integer(j, "sequence_length");
  s.batch_rows = positive_integer(j, "batch_rows");
  s.dtype = text(j, "dtype");
  return s;
}

std::string ThroughputShape::key() const {
  return schedule + " d" + std::to_string(d_model) + " h" + std::to_string(n_heads) + "x" + std::to_string(head_dim) +
         " kv" + std::to_string(mla_kv_latent_dim) + " c" + std::to_string(kda_chunk_size) + " ffn" +
         std::to_string(ffn_size) + " v" + std::to_string(vocab_size) + " T" + std::to_string(sequence_length) + " B" +
         std::to_string(batch_rows) + " " + dtype;
}

nlohmann::json ThroughputRecord::to_json() const {
  return {
      {"record", kRecordKind},    {"version", kRecordVersion},    {"device", device}, {"date", date},    {"arm", arm},
      {"shape", shape.to_json()}, {"tokens_per_s", tokens_per_s}, {"steps", steps},   {"warmup", warmup}};
}

ThroughputRecord ThroughputRecord::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("not a JSON object");
  if (j.value("record", std::string()) != kRecordKind) {
    throw std::invalid_argument(std::string("not a throughput record (\"record\" is not \"") + kRecordKind + "\")");
  }
  if (field(j, "version") != kRecordVersion) {
    throw std::invalid_argument("version " + j.at("version").dump() + " is not " + std::to_string(kRecordVersion));
  }
  ThroughputRecord r;
  r.device = text(j, "device");
  r.date = text(j, "date");
  r.arm = j.value("arm", std::string());
  try {
    r.shape = ThroughputShape::from_json(field(j, "shape"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("shape: ") + e.what());
  }
  const auto& rate = field(j, "tokens_per_s");
  if (!rate.is_number() || !(rate.get<double>() > 0)) {
    throw std::invalid_argument("field \"tokens_per_s\" must be a positive number, not " + rate.dump());
  }
  r.tokens_per_s = rate.get<double>();
  r.steps = j.value("steps", std::int64_t{0});
  r.warmup = j.value("warmup", std::int64_t{0});
  return r;
}

ThroughputRecords read_throughput_records(const std::filesystem::path& file) {
  ThroughputRecords out;
  std::ifstream in(file);
  if (!in) return out;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.records.push_back(ThroughputRecord::from_json(nlohmann::json::parse(line)));
    } catch (const std::exception& e) {
      out.warnings.push_back(file.string() + ":" + std::to_string(number) + ": " + e.what() + "; line ignored");
    }
  }
  return out;
}

void append_throughput_record(const std::filesystem::path& file, const ThroughputRecord& record) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::app);
  out << record.to_json().dump() << "\n";
  out.flush();
  if (!out) {
    throw std::runtime_error("cannot append the throughput record to " + file.string() +
                             ": choose a writable file with --record PATH");
  }
}

std::filesystem::path default_throughput_records_path() {
  std::error_code ec;
  const auto binary = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto folder = ec ? std::filesystem::current_path() : binary.parent_path();
  return folder / "bench-records" / "train.jsonl";
}

std::optional<ThroughputRecord> match_throughput_record(const std::vector<ThroughputRecord>& records,
                                                        const std::string& device_kind, const ThroughputShape& shape) {
  const auto wanted = lower(device_kind);
  std::optional<ThroughputRecord> best;
  for (const auto& r : records) {
    if (!(r.shape == shape) || lower(r.device).find(wanted) == std::string::npos) continue;
    if (!best || r.date >= best->date) best = r;
  }
  return best;
}

}  // namespace k3lab::train
