#include "k3lab/experiments/training/downstream_spec.hpp"

#include <algorithm>
#include <stdexcept>

#include "k3lab/core/protocol.hpp"
#include "k3lab/train/builtin_suite.hpp"
#include "k3lab/train/byte_tokenizer.hpp"
#include "k3lab/train/hellaswag_file.hpp"

namespace k3lab::experiments::training {

namespace {

const std::string kPath = "parameters.downstream";

// The built-in suite the spec's generator seed makes.
train::BuiltinSuite builtin_suite_of(const DownstreamSuite& spec) {
  train::BuiltinSuiteSpec builtin;
  builtin.seed = spec.seed.value_or(builtin.seed);
  return train::make_builtin_suite(builtin);
}

void check_builtin(const DownstreamSuite& s, const DataSource& data, std::int64_t vocab_size, Issues& issues) {
  if (s.file) issues.push_back({kPath + ".file", "must be null for the built-in suite (it is generated, never read)"});
  if (!s.seed) issues.push_back({kPath + ".seed", "the built-in suite needs its generator seed (docs/downstream.md)"});
  if (data.tokenizer != "bytes" || vocab_size < train::kByteVocabSize) {
    issues.push_back({kPath + ".suite", std::string(train::kBuiltinSuiteId) +
                                            " is byte tokens: it needs data.tokenizer \"bytes\" and vocab_size >= 256"});
  }
}

void check_hellaswag(const DownstreamSuite& s, const DataSource& data, std::int64_t vocab_size, Issues& issues) {
  if (!s.file || s.file->empty()) {
    issues.push_back({kPath + ".file", "names llm.c's hellaswag_val.bin under the data root, e.g. "
                                       "\"hellaswag/hellaswag_val.bin\" (docs/downstream.md)"});
  } else if (std::filesystem::path(*s.file).is_absolute() || s.file->find("..") != std::string::npos) {
    issues.push_back({kPath + ".file", "must be a path inside the data root (no leading '/', no \"..\")"});
  }
  if (s.seed) issues.push_back({kPath + ".seed", "must be null for a file suite (only the built-in suite is generated)"});
  if (data.tokenizer != "gpt2" || vocab_size < train::kGpt2VocabSize) {
    issues.push_back({kPath + ".suite", std::string(kHellaSwagSuiteId) +
                                            " is GPT-2 tokens: it needs data.tokenizer \"gpt2\" and vocab_size >= 50257"});
  }
}

void check_points(const DownstreamSuite& s, const TokenSchedule& schedule, Issues& issues) {
  const std::string path = kPath + ".at_tokens";
  for (std::size_t i = 0; i < s.at_tokens.size(); ++i) {
    const auto t = s.at_tokens[i];
    if (t <= 0 || t % schedule.eval_interval_tokens != 0) {
      issues.push_back({path, std::to_string(t) + " is not an evaluation point: use multiples of eval_interval_tokens (" +
                                  std::to_string(schedule.eval_interval_tokens) + ")"});
    }
    if (i > 0 && t <= s.at_tokens[i - 1]) issues.push_back({path, "must be strictly ascending"});
  }
  if (!s.at_tokens.empty() && s.at_tokens.back() != schedule.token_budget) {
    issues.push_back({path, "must end at token_budget (" + std::to_string(schedule.token_budget) +
                                "): the suite is always scored at the end (with --set token_budget, set downstream.at_tokens too)"});
  }
}

// Like an unpinned dataset folder: the protocol's fault (exit 3), with the hash to pin.
core::ProtocolError not_pinned(const std::filesystem::path& what, const std::string& hash) {
  return core::ProtocolError(what, {{kPath + ".sha256",
                                     "is null: the protocol pins no suite; this one has SHA-256 " + hash +
                                         ": if that is the suite you mean, put it in parameters.downstream.sha256, "
                                         "raise the protocol's version and run `k3lab freeze <experiment>`"}});
}

LoadedSuite load_builtin(const DownstreamSuite& spec) {
  auto suite = builtin_suite_of(spec);
  if (!spec.sha256) throw not_pinned(spec.suite, suite.items_sha256);
  if (*spec.sha256 != suite.items_sha256) {
    throw core::ProtocolError(spec.suite, {{kPath + ".sha256",
                                            "this build generates items_sha256 " + suite.items_sha256 +
                                                " but the protocol pins " + *spec.sha256 +
                                                ": the generator or the embedded corpus changed, so scores would not "
                                                "be comparable; run the k3lab revision that froze the protocol, or "
                                                "pin the new suite in a new protocol version"}});
  }
  auto provenance = suite.derivation();  // before the items move out: it counts them
  return {std::move(suite.items), std::move(provenance)};
}

LoadedSuite load_hellaswag(const DownstreamSuite& spec, std::int64_t vocab_size, const std::filesystem::path& data_root) {
  const auto path = data_root / *spec.file;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("downstream suite " + spec.suite + ": " + path.string() +
                             " does not exist; write it with llm.c's dev/data/hellaswag.py and copy "
                             "hellaswag_val.bin there (docs/downstream.md, \"Where to put it\"), or pass --data-dir");
  }
  auto file = train::read_eval_file(path, std::min(vocab_size, train::kGpt2VocabSize));
  if (!spec.sha256) throw not_pinned(path, file.sha256);
  if (*spec.sha256 != file.sha256) {
    throw core::ProtocolError(path, {{kPath + ".sha256", "the file has SHA-256 " + file.sha256 +
                                                            " but the protocol pins " + *spec.sha256 +
                                                            "; put the pinned file there (docs/downstream.md), or "
                                                            "pin this one in a new protocol version"}});
  }
  double chance = 0;
  for (const auto& item : file.items) chance += 1.0 / static_cast<double>(item.endings.size());
  const auto items = static_cast<std::int64_t>(file.items.size());
  nlohmann::json provenance = {{"suite", spec.suite},
                               {"source", "HellaSwag validation split (Zellers et al., 2019), tokenised with GPT-2 "
                                          "by llm.c's dev/data/hellaswag.py"},
                               {"licence", "MIT (github.com/rowanz/hellaswag)"},
                               {"file", *spec.file},
                               {"sha256", file.sha256},
                               {"tokenizer", "gpt2"},
                               {"candidates", train::kEvalFileCompletions},
                               {"items", items},
                               {"chance", chance / static_cast<double>(items)}};
  return {std::move(file.items), std::move(provenance)};
}

}  // namespace

void declare_downstream(Fields<DownstreamBlock>& fields, const std::string& doc) {
  fields.optional_object("downstream", doc, &DownstreamBlock::downstream, [](Fields<DownstreamSuite>& d) {
    d.string("suite", "the multiple-choice suite (docs/downstream.md)", &DownstreamSuite::suite)
        .one_of({train::kBuiltinSuiteId, kHellaSwagSuiteId});
    d.string_or_null("file", "the suite's file under the data root (HellaSwag); null for the built-in suite",
                     &DownstreamSuite::file);
    d.string_or_null("sha256", "SHA-256 of the file (HellaSwag) or of the generated items (built-in); null: not pinned "
                               "(a run refuses and prints the hash to pin)",
                     &DownstreamSuite::sha256);
    d.count_or_null("seed", "generator seed of the built-in suite; null for a file suite", &DownstreamSuite::seed);
    d.string("metric", "the figure the decisions read: acc (raw log-likelihood) or acc_norm (per token)",
             &DownstreamSuite::metric)
        .one_of({"acc", "acc_norm"});
    d.integer("batch_rows", "candidate rows per forward, the same for every arm", &DownstreamSuite::batch_rows)
        .at_least(1);
    d.array_of("at_tokens", core::FieldType::Integer, "training tokens at which the suite is scored (the last: the budget)",
               &DownstreamSuite::at_tokens)
        .at_least(1)
        .non_empty();
  });
}

void check_downstream(const DownstreamBlock& block, const DataSource& data, std::int64_t vocab_size,
                      const TokenSchedule& schedule, Issues& issues) {
  if (!block.downstream) return;
  const auto& s = *block.downstream;
  if (s.suite == train::kBuiltinSuiteId) {
    check_builtin(s, data, vocab_size, issues);
  } else {
    check_hellaswag(s, data, vocab_size, issues);
  }
  check_points(s, schedule, issues);
}

double downstream_tokens_per_scoring(const DownstreamSuite& spec, std::int64_t max_length) {
  if (spec.suite != train::kBuiltinSuiteId) {
    return kHellaSwagItems * static_cast<double>(train::kEvalFileCompletions) * kHellaSwagAssumedRowTokens;
  }
  std::vector<std::int64_t> rows;
  for (const auto& item : builtin_suite_of(spec).items) {
    for (const auto& ending : item.endings) {
      rows.push_back(std::min<std::int64_t>(static_cast<std::int64_t>(item.context.size() + ending.size()) - 1, max_length));
    }
  }
  double tokens = 0;
  for (std::size_t first = 0; first < rows.size(); first += static_cast<std::size_t>(spec.batch_rows)) {
    const auto last = std::min(rows.size(), first + static_cast<std::size_t>(spec.batch_rows));
    const auto longest = *std::max_element(rows.begin() + first, rows.begin() + last);
    tokens += static_cast<double>((last - first) * longest);
  }
  return tokens;
}

LoadedSuite load_downstream_suite(const DownstreamSuite& spec, std::int64_t vocab_size,
                                  const std::filesystem::path& data_root) {
  if (spec.suite == train::kBuiltinSuiteId) return load_builtin(spec);
  return load_hellaswag(spec, vocab_size, data_root);
}

}  // namespace k3lab::experiments::training
