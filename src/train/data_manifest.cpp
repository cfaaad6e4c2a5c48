#include "k3lab/train/data_manifest.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/train/dataset.hpp"
#include "k3lab/train/token_shard.hpp"

namespace k3lab::train {
namespace {

constexpr const char* kHashCacheFormat = "k3lab-shard-hashes-1";
constexpr std::size_t kReadChunkBytes = 1 << 20;

std::string regenerate_hint(const std::filesystem::path& folder) {
  return "regenerate it with `k3lab data manifest " + folder.string() + " --source .. --licence ..`";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Feeds bytes [offset, offset + length) of `in` to `hash`; throws when the file is shorter.
void hash_range(std::ifstream& in, const std::filesystem::path& path, ByteRange range, core::Sha256& hash) {
  std::vector<char> buffer(kReadChunkBytes);
  in.clear();
  in.seekg(static_cast<std::streamoff>(range.offset));
  std::uintmax_t left = range.length;
  while (left > 0) {
    const auto want = static_cast<std::streamsize>(std::min<std::uintmax_t>(left, buffer.size()));
    if (!in.read(buffer.data(), want))
      throw std::runtime_error("cannot read " + path.string() + " (shorter than expected)");
    hash.update(buffer.data(), static_cast<std::size_t>(want));
    left -= static_cast<std::uintmax_t>(want);
  }
}

std::ifstream open_binary(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string() + " for reading");
  return in;
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::int64_t mtime_ns(const std::filesystem::path& path) {
  const auto since_epoch = std::filesystem::last_write_time(path).time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
}

// ---- manifest fields: each malformed one its own error

const nlohmann::json& field(const nlohmann::json& object, const std::string& key, const std::string& where,
                            const std::filesystem::path& file) {
  if (!object.contains(key))
    throw DataPinError(file, where + key + " is missing; " + regenerate_hint(file.parent_path()));
  return object.at(key);
}

std::string text_field(const nlohmann::json& object, const std::string& key, const std::string& where,
                       const std::filesystem::path& file) {
  const auto& value = field(object, key, where, file);
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw DataPinError(file, where + key + " must be a non-empty string, got " + value.dump() + "; " +
                                 regenerate_hint(file.parent_path()));
  }
  return value.get<std::string>();
}

std::uint64_t count_field(const nlohmann::json& object, const std::string& key, const std::string& where,
                          const std::filesystem::path& file) {
  const auto& value = field(object, key, where, file);
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0) {
    throw DataPinError(file, where + key + " must be a positive integer, got " + value.dump() + "; " +
                                 regenerate_hint(file.parent_path()));
  }
  return value.get<std::uint64_t>();
}

ManifestShard parse_shard(const nlohmann::json& entry, std::size_t index, const std::filesystem::path& file) {
  const std::string where = "shards[" + std::to_string(index) + "].";
  if (!entry.is_object()) throw DataPinError(file, where.substr(0, where.size() - 1) + " must be an object");
  ManifestShard s;
  s.name = text_field(entry, "name", where, file);
  if (s.name.find('/') != std::string::npos || s.name == "." || s.name == "..") {
    throw DataPinError(file, where + "name \"" + s.name + "\" must be a file name inside the folder; " +
                                 regenerate_hint(file.parent_path()));
  }
  s.bytes = count_field(entry, "bytes", where, file);
  s.tokens = static_cast<std::int64_t>(count_field(entry, "tokens", where, file));
  s.token_bytes = static_cast<int>(count_field(entry, "token_bytes", where, file));
  if (s.token_bytes != 2 && s.token_bytes != 4) {
    throw DataPinError(file, where + "token_bytes must be 2 or 4, got " + std::to_string(s.token_bytes) + "; " +
                                 regenerate_hint(file.parent_path()));
  }
  s.sha256 = text_field(entry, "sha256", where, file);
  if (!is_sha256_hex(s.sha256)) {
    throw DataPinError(file, where + "sha256 must be 64 lower-case hex digits, got \"" + s.sha256 + "\"; " +
                                 regenerate_hint(file.parent_path()));
  }
  return s;
}

// ---- the hash cache: {format, shards: {name: {bytes, mtime_ns, sha256, sampled_sha256}}}

nlohmann::json read_hash_cache(const std::filesystem::path& folder) {
  const auto path = folder / kShardHashCacheFile;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nlohmann::json::object();
  try {
    auto cache = nlohmann::json::parse(read_text(path));
    if (cache.value("format", "") == kHashCacheFormat && cache.contains("shards") && cache["shards"].is_object()) {
      return cache["shards"];
    }
  } catch (const std::exception&) {
    // A torn or foreign cache only costs a full hash: fall through to an empty one.
  }
  return nlohmann::json::object();
}

// Best effort: a folder we may not write (shared read-only storage) is hashed in full on every use.
void write_hash_cache(const std::filesystem::path& folder, const nlohmann::json& shards) {
  const nlohmann::json cache = {{"format", kHashCacheFormat}, {"shards", shards}};
  try {
    core::write_file_atomically(folder / kShardHashCacheFile, cache.dump(2) + "\n", core::Durability::AtomicOnly);
  } catch (const std::exception&) {
    // The cache is an optimisation; verification already happened.
  }
}

nlohmann::json cache_entry(const std::filesystem::path& path, const std::string& sha256) {
  return {{"bytes", std::filesystem::file_size(path)},
          {"mtime_ns", mtime_ns(path)},
          {"sha256", sha256},
          {"sampled_sha256", sampled_sha256(path)}};
}

// One listed shard against the manifest: full hash unless the cache holds this (size, mtime) with the
// manifest's hash, then the sampled blocks against the cached ones. Returns whether the cache changed.
bool verify_shard(const std::filesystem::path& folder, const ManifestShard& shard, nlohmann::json& cache) {
  const auto path = folder / shard.name;
  const auto bytes = std::filesystem::file_size(path);
  if (bytes != shard.bytes) {
    throw DataPinError(path, "has " + std::to_string(bytes) + " bytes but the manifest lists " +
                                 std::to_string(shard.bytes) +
                                 ": restore the pinned shard (the protocol's data "
                                 "differs from this folder)");
  }
  const auto cached = cache.find(shard.name);
  if (cached != cache.end() && cached->is_object() && cached->value("bytes", std::uint64_t{0}) == bytes &&
      cached->value("mtime_ns", std::int64_t{0}) == mtime_ns(path) && cached->value("sha256", "") == shard.sha256) {
    if (cached->value("sampled_sha256", "") == sampled_sha256(path)) return false;
    throw DataPinError(path,
                       "its sampled blocks differ from when it was hashed, with the same size and modification "
                       "time: the shard changed in place. Restore the pinned shard (delete " +
                           (folder / kShardHashCacheFile).string() + " to re-hash every shard in full)");
  }
  const auto sha = file_sha256(path);
  if (sha != shard.sha256) {
    throw DataPinError(path, "sha256 " + sha + " differs from the manifest's " + shard.sha256 +
                                 ": restore the pinned shard (the protocol's data differs from this folder)");
  }
  cache[shard.name] = cache_entry(path, sha);
  return true;
}

// The folder's shards (as the loader finds them) against the manifest's list: nothing missing, nothing extra.
void check_shard_set(const std::filesystem::path& folder, const DatasetManifest& manifest) {
  std::set<std::string> on_disk;
  const auto files = list_shard_files(folder);
  for (const auto* list : {&files.train, &files.validation}) {
    for (const auto& p : *list) on_disk.insert(p.filename().string());
  }
  std::set<std::string> listed;
  for (const auto& s : manifest.shards) listed.insert(s.name);
  for (const auto& name : listed) {
    if (!on_disk.count(name)) {
      throw DataPinError(folder / name, "is listed in " + (folder / kDatasetManifestFile).string() +
                                            " but missing from the folder: restore it");
    }
  }
  for (const auto& name : on_disk) {
    if (!listed.count(name)) {
      throw DataPinError(folder / name, "is not listed in " + (folder / kDatasetManifestFile).string() +
                                            ", and a run would train or validate on it unpinned: move it out of "
                                            "the folder (a manifest that lists it is a new protocol hash)");
    }
  }
}

std::string null_pin_message(const std::filesystem::path& folder, const std::string& manifest_sha) {
  std::string message = "the protocol pins no manifest for this dataset (parameters.data.manifest_sha256 is null): ";
  if (manifest_sha.empty()) {
    message += "run `k3lab data manifest " + folder.string() + " --source .. --licence ..`, put the printed hash";
  } else {
    message += "the folder's manifest hashes to " + manifest_sha + " (check it lists the data you mean); put that hash";
  }
  return message + " in the protocol's data.manifest_sha256, then run `k3lab freeze <experiment>`";
}

}  // namespace

DataPinError::DataPinError(const std::filesystem::path& file, const std::string& problem)
    : core::ProtocolError(file, {{"data", problem}}) {}

std::vector<ByteRange> sampled_blocks(std::uintmax_t file_bytes) {
  if (file_bytes <= kSampleBlockBytes * kSampleBlocks) return {{0, file_bytes}};
  std::vector<ByteRange> blocks;
  const std::uintmax_t last_start = file_bytes - kSampleBlockBytes;
  for (int k = 0; k < kSampleBlocks; ++k) {
    blocks.push_back({last_start * static_cast<std::uintmax_t>(k) / (kSampleBlocks - 1), kSampleBlockBytes});
  }
  return blocks;
}

std::string file_sha256(const std::filesystem::path& path) {
  auto in = open_binary(path);
  core::Sha256 hash;
  hash_range(in, path, {0, std::filesystem::file_size(path)}, hash);
  return hash.hex_digest();
}

std::string sampled_sha256(const std::filesystem::path& path) {
  auto in = open_binary(path);
  core::Sha256 hash;
  for (const auto& block : sampled_blocks(std::filesystem::file_size(path))) hash_range(in, path, block, hash);
  return hash.hex_digest();
}

DatasetManifest build_dataset_manifest(const ManifestRequest& request) {
  const std::string fix = ": state it, e.g. `k3lab data manifest " + request.folder.string() +
                          " --source \"FineWeb-Edu sample-10BT, tokenized by llm.c\" --licence \"ODC-By 1.0\"`";
  if (request.source.empty())
    throw std::invalid_argument("data manifest needs --source (where the data comes from)" + fix);
  if (request.licence.empty()) throw std::invalid_argument("data manifest needs --licence (the data's licence)" + fix);
  if (request.tokenizer.empty()) throw std::invalid_argument("data manifest needs --tokenizer (e.g. gpt2 or bytes)");
  if (!std::filesystem::is_directory(request.folder)) {
    throw std::runtime_error("data manifest: " + request.folder.string() +
                             " is not a folder; name the dataset folder "
                             "that holds the *train*.bin and *val*.bin shards");
  }
  const auto files = find_shard_files(request.folder);
  std::set<std::filesystem::path> paths(files.train.begin(), files.train.end());
  paths.insert(files.validation.begin(), files.validation.end());
  DatasetManifest m;
  auto normal = std::filesystem::absolute(request.folder).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();  // "data/toy/" names the folder toy
  m.dataset = normal.filename().string();
  m.tokenizer = request.tokenizer;
  m.source = request.source;
  m.licence = request.licence;
  for (const auto& path : paths) {
    const auto info = inspect_token_shard(path);
    m.shards.push_back({path.filename().string(), std::filesystem::file_size(path), info.num_tokens,
                        static_cast<int>(info.width), file_sha256(path)});
  }
  return m;
}

std::string dataset_manifest_text(const DatasetManifest& manifest) {
  auto shards = manifest.shards;
  std::sort(shards.begin(), shards.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& s : shards) {
    list.push_back({{"name", s.name},
                    {"bytes", s.bytes},
                    {"tokens", s.tokens},
                    {"token_bytes", s.token_bytes},
                    {"sha256", s.sha256}});
  }
  const nlohmann::ordered_json doc = {{"format", kDatasetManifestFormat}, {"dataset", manifest.dataset},
                                      {"tokenizer", manifest.tokenizer},  {"source", manifest.source},
                                      {"licence", manifest.licence},      {"shards", list}};
  return doc.dump(2) + "\n";
}

DatasetManifest parse_dataset_manifest(const std::string& text, const std::filesystem::path& file) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataPinError(file,
                       std::string("is not valid JSON (") + e.what() + "); " + regenerate_hint(file.parent_path()));
  }
  if (!doc.is_object()) throw DataPinError(file, "must be a JSON object; " + regenerate_hint(file.parent_path()));
  if (doc.value("format", "") != kDatasetManifestFormat) {
    throw DataPinError(file, "format is " + (doc.contains("format") ? doc["format"].dump() : std::string("missing")) +
                                 ", expected \"" + kDatasetManifestFormat +
                                 "\" (a manifest written by another tool?); " + regenerate_hint(file.parent_path()));
  }
  DatasetManifest m;
  m.dataset = text_field(doc, "dataset", "", file);
  m.tokenizer = text_field(doc, "tokenizer", "", file);
  m.source = text_field(doc, "source", "", file);
  m.licence = text_field(doc, "licence", "", file);
  const auto& shards = field(doc, "shards", "", file);
  if (!shards.is_array() || shards.empty()) {
    throw DataPinError(file, "shards must be a non-empty array; " + regenerate_hint(file.parent_path()));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    m.shards.push_back(parse_shard(shards[i], i, file));
    if (!names.insert(m.shards.back().name).second) {
      throw DataPinError(file, "shards[" + std::to_string(i) + "].name \"" + m.shards.back().name +
                                   "\" is listed twice; " + regenerate_hint(file.parent_path()));
    }
  }
  return m;
}

std::string write_dataset_manifest(const DatasetManifest& manifest, const std::filesystem::path& folder) {
  const std::string text = dataset_manifest_text(manifest);
  core::write_file_atomically(folder / kDatasetManifestFile, text);
  auto cache = read_hash_cache(folder);
  for (const auto& s : manifest.shards) cache[s.name] = cache_entry(folder / s.name, s.sha256);
  write_hash_cache(folder, cache);
  return core::sha256_hex(text);
}

nlohmann::json verify_pinned_folder(const std::filesystem::path& folder,
                                    const std::optional<std::string>& pinned_sha256) {
  const auto manifest_path = folder / kDatasetManifestFile;
  std::error_code ec;
  const bool has_manifest = std::filesystem::is_regular_file(manifest_path, ec);
  const std::string text = has_manifest ? read_text(manifest_path) : std::string();
  const std::string manifest_sha = has_manifest ? core::sha256_hex(text) : std::string();
  if (!pinned_sha256) throw DataPinError(manifest_path, null_pin_message(folder, manifest_sha));
  if (!has_manifest) {
    throw DataPinError(manifest_path, "missing: the protocol pins manifest sha256 " + *pinned_sha256 +
                                          ". Run `k3lab data manifest " + folder.string() +
                                          " --source .. --licence ..` and check that it prints that hash (a "
                                          "different hash means other data than the protocol froze)");
  }
  if (manifest_sha != *pinned_sha256) {
    throw DataPinError(manifest_path,
                       "hashes to " + manifest_sha + " but the protocol pins " + *pinned_sha256 +
                           ": this folder holds other data than the protocol froze. Restore the pinned "
                           "manifest and shards; for new data, put the new hash in data.manifest_sha256, "
                           "raise the protocol's version and run `k3lab freeze <experiment>`");
  }
  const auto manifest = parse_dataset_manifest(text, manifest_path);
  check_shard_set(folder, manifest);
  auto cache = read_hash_cache(folder);
  bool changed = false;
  for (const auto& shard : manifest.shards) changed = verify_shard(folder, shard, cache) || changed;
  if (changed) write_hash_cache(folder, cache);
  return {{"manifest_sha256", manifest_sha}, {"source", manifest.source}, {"licence", manifest.licence}};
}

}  // namespace k3lab::train
