#include <functional>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "k3lab/api/sse_bench.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/experiments/runner_scaling.hpp"
#include "k3lab/models/kda_bench.hpp"
#include "k3lab/sim/bench.hpp"
#include "k3lab/train/bench.hpp"
#include "k3lab/validate/fixture_bench.hpp"

namespace k3lab::cli {
namespace {

using Options = nlohmann::json;

// One row per benchmark: `k3lab bench <name> [--opt key=value]...` runs it; each prints its own
// numbers and returns an exit code. Add a benchmark by adding a row; `options` lists the keys it
// takes (empty: none).
struct BenchEntry {
  std::string name;
  std::string what;
  std::string options;
  std::function<int(const Options&, std::ostream&)> run;
};

template <typename T>
void take(const Options& options, const char* key, T& field) {
  if (!options.contains(key)) return;
  try {
    field = options.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("bench kda: --opt ") + key + "=" + options.at(key).dump() +
                                " has the wrong type");
  }
}

models::KdaBenchOptions kda_options(const Options& o) {
  static const std::set<std::string> known = {"batch",  "seq_len",  "heads", "head_dim", "chunk_size", "warmup",
                                              "iterations", "backward", "try_cuda", "seed", "format"};
  for (const auto& [key, value] : o.items()) {
    if (!known.count(key)) throw std::invalid_argument("bench kda: unknown --opt key \"" + key + "\"");
  }
  models::KdaBenchOptions k;
  take(o, "batch", k.batch);
  take(o, "seq_len", k.seq_len);
  take(o, "heads", k.heads);
  take(o, "head_dim", k.head_dim);
  take(o, "chunk_size", k.chunk_size);
  take(o, "warmup", k.warmup);
  take(o, "iterations", k.iterations);
  take(o, "backward", k.backward);
  take(o, "try_cuda", k.try_cuda);
  take(o, "seed", k.seed);
  take(o, "format", k.format);
  return k;
}

int run_without_options(const Options& options, const std::string& name, const std::function<int()>& run) {
  if (!options.empty()) throw std::invalid_argument("bench " + name + " takes no --opt options");
  return run();
}

const std::vector<BenchEntry>& bench_table() {
  static const std::vector<BenchEntry> table = {
      {"fixture",
       "context-probe fixture generation at 32,768 and 1,048,576 tokens, every family (goal: < 100 ms at 1M)", "",
       [](const Options& o, std::ostream& out) {
         return run_without_options(o, "fixture", [&] {
           validate::run_fixture_bench(out);
           return 0;
         });
       }},
      {"memory-pool",
       "one full 1,000,000-arrival trace under each policy; last line: arrivals simulated per second per core "
       "(goal: >= 1,000,000)",
       "",
       [](const Options& o, std::ostream& out) {
         return run_without_options(o, "memory-pool",
                                    [&] { return sim::run_memory_pool_bench(nlohmann::json::object(), out); });
       }},
      {"kda", "chunkwise KDA (LibTorch path) against the float64 recurrence: error and tokens/s, CPU (and CUDA)",
       "batch [1], seq_len [1024], heads [4], head_dim [64], chunk_size [64], warmup [1], iterations [3], "
       "backward [true], try_cuda [true], seed [0], format [md|json]",
       [](const Options& o, std::ostream& out) { return models::run_kda_bench(kda_options(o), out); }},
      {"train", "training step per hybrid-attention arm (full, all-KDA, 3 KDA : 1 MLA): tokens/s and an MFU estimate",
       "d_model [256], n_layers [4], n_heads [4], head_dim [64], mla_kv_latent_dim [128], kda_chunk_size [64], "
       "ffn_size [4 x d_model], vocab_size [256], sequence_length [512], batch_rows [2] (rows per forward), "
       "micro_batches [2] (per step; on the CPU they train side by side, one per thread), steps [5], warmup [2], "
       "device [auto], threads [0], peak_flops, arms (names, comma-separated, e.g. all-kda,hybrid-3kda-1mla), "
       "schedule (one arm, e.g. KKKMKKKM), output [md|json]; "
       "appends a throughput record per arm to --record (k3lab plan reads them)",
       [](const Options& o, std::ostream& out) { return train::run_train_bench(o, out, train::default_bench_arms()); }},
      {"runner",
       "the runner's own work per unit over many empty units, by block of units: median/min/max ms and the "
       "records fed to the window rule (goal: last block within 2x the first)",
       "units [20000], block [1000]",
       [](const Options& o, std::ostream& out) { return experiments::run_runner_bench(o, out); }},
      {"sse", "SSE framing and chat-chunk decoding throughput on a synthetic 64 MiB Kimi-shaped stream", "",
       [](const Options& o, std::ostream& out) {
         return run_without_options(o, "sse", [&] {
           api::run_sse_bench(out);
           return 0;
         });
       }},
  };
  return table;
}

std::string bench_names() {
  std::string names;
  for (const auto& b : bench_table()) {
    names += "\n  " + b.name + ": " + b.what;
    if (!b.options.empty()) names += "\n    --opt keys [defaults]: " + b.options;
  }
  return names;
}

// "key=value": the value as JSON when it parses (numbers, true/false, lists), else as a string.
Options parse_options(const std::vector<std::string>& pairs) {
  Options options = Options::object();
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("bench: --opt \"" + pair + "\" is not key=value (for example --opt steps=10)");
    }
    const std::string key = pair.substr(0, eq), text = pair.substr(eq + 1);
    options[key] = Options::accept(text) ? Options::parse(text) : Options(text);
  }
  return options;
}

}  // namespace

void register_bench(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks that print their numbers (recorded in docs/benchmarks.md):" +
                                              bench_names());
  auto name = std::make_shared<std::string>();
  auto pairs = std::make_shared<std::vector<std::string>>();
  auto record = std::make_shared<std::string>();
  auto no_record = std::make_shared<bool>(false);
  cmd->add_option("name", *name, "Benchmark name")->required();
  cmd->add_option("--opt", *pairs, "key=value option of the benchmark (repeatable; keys listed above)");
  cmd->add_option("--record", *record,
                  "train only: JSON-lines file the throughput records are appended to (default: "
                  "bench-records/train.jsonl beside the k3lab binary, i.e. in the build folder)");
  cmd->add_flag("--no-record", *no_record, "train only: write no throughput record");
  cmd->callback([name, pairs, record, no_record, &ctx] {
    auto options = parse_options(*pairs);
    if (options.contains("record"))
      throw std::invalid_argument("bench: give the record file as --record PATH, not --opt");
    if (*name != "train" && (!record->empty() || *no_record)) {
      throw std::invalid_argument("bench: --record and --no-record apply to `bench train` only");
    }
    if (*name == "train" && !*no_record) {
      options["record"] = record->empty() ? train::default_throughput_records_path().string() : *record;
    }
    for (const auto& b : bench_table()) {
      if (b.name == *name) {
        ctx.exit_code = b.run(options, std::cout);
        return;
      }
    }
    throw std::invalid_argument("bench: unknown benchmark \"" + *name + "\"; known:" + bench_names());
  });
}

}  // namespace k3lab::cli
