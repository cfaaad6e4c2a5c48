#pragma once
// The predeclared downstream suite of a proxy experiment (docs/downstream.md), torch-free: the
// protocol's "downstream" block, its checks against the model and the schedule, and loading the
// pinned suite (the built-in suite regenerated and checked against its frozen items hash, or llm.c's
// HellaSwag file under the data root checked against its frozen file hash). downstream.hpp scores it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/train/multiple_choice_item.hpp"

namespace k3lab::experiments::training {

inline constexpr const char* kHellaSwagSuiteId = "hellaswag-val-llmc";

struct DownstreamSuite {
  std::string suite;                       // kBuiltinSuiteId or kHellaSwagSuiteId
  std::optional<std::string> file;         // HellaSwag: path under the data root
  std::optional<std::string> sha256;       // HellaSwag: the file's; built-in: items_sha256. null: not pinned
  std::optional<std::uint64_t> seed;       // built-in: the generator seed
  std::string metric;                      // "acc" or "acc_norm": what the decisions read
  std::int64_t batch_rows = 0;             // candidate rows per forward (frozen: forwards round by shape)
  std::vector<std::int64_t> at_tokens;     // training tokens at which it is scored; the last is the budget
};

// What a module's parameters derive from to carry the block (absent in protocols that predate it).
struct DownstreamBlock {
  std::optional<DownstreamSuite> downstream;
};

// "downstream": {suite, file, sha256, seed, metric, batch_rows, at_tokens} (optional as a whole).
void declare_downstream(Fields<DownstreamBlock>& fields, const std::string& doc);

// The block's rules across fields: the suite's own fields, its tokenizer against data.tokenizer and
// vocab_size, at_tokens ascending on evaluation points with the budget last.
void check_downstream(const DownstreamBlock& block, const DataSource& data, std::int64_t vocab_size,
                      const TokenSchedule& schedule, Issues& issues);

// HellaSwag rows as `plan` prices them without reading the file: 10,042 items of 4 candidates (llm.c's
// validation file), each row about 100 GPT-2 tokens once padded to its batch's longest (contexts of
// about 60 tokens and endings of about 20 to 40; an assumption, said so in the plan).
inline constexpr double kHellaSwagItems = 10042;
inline constexpr double kHellaSwagAssumedRowTokens = 100;

// Forward tokens of one scoring of the suite: the built-in suite's exactly (its rows in order, each
// batch of batch_rows padded to its longest row, as the scorer does), HellaSwag's from the assumption
// above.
double downstream_tokens_per_scoring(const DownstreamSuite& spec, std::int64_t max_length);

// The suite's items and what a page cites (suite, items, chance, sha256, source, licence).
struct LoadedSuite {
  std::vector<train::MultipleChoiceItem> items;
  nlohmann::json provenance;
};

// Loads the suite; std::runtime_error with the fix when its file is missing or malformed (a preflight
// problem), core::ProtocolError when the protocol pins no hash or another one (exit 3, nothing recorded).
LoadedSuite load_downstream_suite(const DownstreamSuite& spec, std::int64_t vocab_size,
                                  const std::filesystem::path& data_root);

}  // namespace k3lab::experiments::training
