#include "k3lab/train/dataset.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/builtin_corpus.hpp"
#include "k3lab/train/byte_tokenizer.hpp"
#include "k3lab/train/data_manifest.hpp"

namespace k3lab::train {
namespace {

// builtin-tiny: the first 90% of the bytes train, the rest validate.
constexpr double kBuiltinTrainFraction = 0.9;

Dataset load_builtin(const DatasetRequest& request) {
  if (request.tokenizer != "bytes") {
    throw std::runtime_error("dataset builtin-tiny is byte-level text; set data.tokenizer to \"bytes\" (got \"" +
                             request.tokenizer + "\")");
  }
  if (request.vocab_size < kByteVocabSize) {
    throw std::runtime_error("dataset builtin-tiny has byte tokens 0..255; model.vocab_size must be at least 256 (got " +
                             std::to_string(request.vocab_size) + ")");
  }
  const std::string_view text = builtin_tiny_text();
  const auto split = static_cast<std::size_t>(static_cast<double>(text.size()) * kBuiltinTrainFraction);
  Dataset d;
  d.id = request.id;
  d.tokenizer = request.tokenizer;
  d.vocab_size = request.vocab_size;
  d.train = TokenStream::from_tokens(encode_bytes(text.substr(0, split)));
  d.validation = TokenStream::from_tokens(encode_bytes(text.substr(split)));
  const std::string sha = core::sha256_hex(text);
  if (sha != kBuiltinTinySha256) {
    throw std::runtime_error("dataset builtin-tiny: the embedded text's sha256 " + sha +
                             " differs from fixtures/corpus/MANIFEST.json; rebuild k3lab_train from a clean tree");
  }
  d.provenance = {{"dataset", request.id},
                  {"kind", "builtin"},
                  {"source", "Jargon File 4.4.7 excerpt (Debian jargon-text 4.4.7-4.1), fixtures/corpus/"},
                  {"licence", "public domain"},
                  {"sha256", sha},
                  {"tokenizer", "bytes"},
                  {"train_tokens", d.train.size()},
                  {"validation_tokens", d.validation.size()}};
  return d;
}

std::vector<std::filesystem::path> shards_matching(const std::filesystem::path& dir, const std::string& role) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file() && entry.path().extension() == ".bin" && name.find(role) != std::string::npos) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

nlohmann::json shard_list(const std::vector<std::filesystem::path>& shards) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : shards) {
    const auto info = inspect_token_shard(s);
    list.push_back({{"file", s.filename().string()},
                    {"tokens", info.num_tokens},
                    {"token_bytes", static_cast<int>(info.width)}});
  }
  return list;
}

Dataset load_directory(const DatasetRequest& request) {
  const auto dir = request.data_root / request.id;
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error(
        "dataset \"" + request.id + "\": no directory " + dir.string() +
        ". Put llm.c .bin token shards there (*train*.bin and *val*.bin, e.g. modded-nanogpt's fineweb_train_000001.bin), "
        "point --data-dir / $K3LAB_DATA_DIR at the folder that holds it, or build the Jargon File corpus with "
        "scripts/build-corpus.sh (dataset \"jargon-file\")");
  }
  nlohmann::json pin;
  if (request.require_pinned_manifest) pin = verify_pinned_folder(dir, request.manifest_sha256);
  const auto [train, val] = find_shard_files(dir);
  nlohmann::json manifest;
  const auto manifest_path = dir / "manifest.json";
  if (std::filesystem::exists(manifest_path)) {
    std::ifstream in(manifest_path);
    try {
      manifest = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("dataset \"" + request.id + "\": " + manifest_path.string() + " is not valid JSON (" +
                               e.what() + "); regenerate it or remove it");
    }
    const std::string declared = manifest.value("tokenizer", "");
    if (!declared.empty() && declared != request.tokenizer) {
      throw std::runtime_error("dataset \"" + request.id + "\": its manifest says tokenizer \"" + declared +
                               "\" but the protocol asks for \"" + request.tokenizer +
                               "\"; use shards made with the protocol's tokenizer");
    }
  }
  Dataset d;
  d.id = request.id;
  d.tokenizer = request.tokenizer;
  d.vocab_size = request.vocab_size;
  d.train = TokenStream::from_shards(train);
  d.validation = TokenStream::from_shards(val);
  d.provenance = {{"dataset", request.id},
                  {"kind", "shards"},
                  {"directory", dir.string()},
                  {"tokenizer", request.tokenizer},
                  {"tokenizer_checked_by_manifest", !manifest.is_null() && manifest.contains("tokenizer")},
                  {"train_shards", shard_list(train)},
                  {"validation_shards", shard_list(val)},
                  {"train_tokens", d.train.size()},
                  {"validation_tokens", d.validation.size()},
                  {"manifest", manifest}};
  if (!pin.is_null()) d.provenance.update(pin);
  return d;
}

}  // namespace

ShardFiles list_shard_files(const std::filesystem::path& dir) {
  return {shards_matching(dir, "train"), shards_matching(dir, "val")};
}

ShardFiles find_shard_files(const std::filesystem::path& dir) {
  auto files = list_shard_files(dir);
  if (files.train.empty() || files.validation.empty()) {
    throw std::runtime_error("dataset folder " + dir.string() +
                             " needs at least one *train*.bin and one *val*.bin "
                             "llm.c token shard (found " +
                             std::to_string(files.train.size()) + " train, " + std::to_string(files.validation.size()) +
                             " val); put the shards there");
  }
  return files;
}

std::filesystem::path data_root_from(const nlohmann::json& options) {
  if (options.is_object() && options.contains("data_dir")) {
    const auto& value = options.at("data_dir");
    if (!value.is_string() || value.get<std::string>().empty()) {
      throw std::invalid_argument("option data_dir must be a non-empty path string");
    }
    return value.get<std::string>();
  }
  if (const char* env = std::getenv("K3LAB_DATA_DIR"); env && *env) return env;
  return "data";
}

Dataset load_dataset(const DatasetRequest& request) {
  if (request.id.empty()) throw std::invalid_argument("dataset id is empty; set data.dataset in the protocol");
  if (request.vocab_size <= 0) throw std::invalid_argument("dataset \"" + request.id + "\": vocab_size must be positive");
  if (request.id == kBuiltinTinyDataset) return load_builtin(request);
  if (request.id.find('/') != std::string::npos || request.id.find("..") != std::string::npos) {
    throw std::invalid_argument("dataset id \"" + request.id + "\" must be a plain folder name under the data root");
  }
  return load_directory(request);
}

}  // namespace k3lab::train
