#include "k3lab/train/bench.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/core/allocator_policy.hpp"
#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/models/layer_schedule.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/hardware_peak.hpp"
#include "k3lab/train/micro_batch_lanes.hpp"
#include "k3lab/train/optimizer.hpp"
#include "k3lab/train/thread_pools.hpp"

namespace k3lab::train {
namespace {

std::int64_t integer(const nlohmann::json& o, const char* key, std::int64_t fallback) {
  if (!o.contains(key)) return fallback;
  if (!o.at(key).is_number_integer()) throw std::invalid_argument(std::string("bench option ") + key + ": expected an integer");
  const auto v = o.at(key).get<std::int64_t>();
  if (v < 0) throw std::invalid_argument(std::string("bench option ") + key + ": must be >= 0");
  return v;
}

std::string text(const nlohmann::json& o, const char* key, const std::string& fallback) {
  if (!o.contains(key)) return fallback;
  if (!o.at(key).is_string()) {
    throw std::invalid_argument(std::string("bench option ") + key + ": expected text, got " + o.at(key).dump());
  }
  return o.at(key).get<std::string>();
}

std::string arm_schedule(const BenchArm& arm, std::int64_t layers) {
  const auto period = static_cast<std::int64_t>(arm.pattern.size());
  if (period == 0 || layers % period != 0) {
    throw std::invalid_argument("bench option n_layers (" + std::to_string(layers) + ") must be a positive multiple of arm " +
                                arm.name + "'s pattern length (" + std::to_string(period) + ", \"" + arm.pattern + "\")");
  }
  std::string schedule;
  for (std::int64_t i = 0; i < layers; i += period) schedule += arm.pattern;
  models::parse_schedule(schedule);  // throws naming a letter that is no mixer
  return schedule;
}

// The "arms" option: a JSON array of arm names, or one name or several separated by commas.
std::vector<std::string> arm_names(const nlohmann::json& value) {
  const auto usage = std::string("bench option arms: expected arm names, e.g. --opt arms=all-kda,hybrid-3kda-1mla or ") +
                     "--opt 'arms=[\"all-kda\"]'; got " + value.dump();
  std::vector<std::string> names;
  if (value.is_string()) {
    std::stringstream list(value.get<std::string>());
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  } else if (value.is_array()) {
    for (const auto& name : value) {
      if (!name.is_string()) throw std::invalid_argument(usage);
      names.push_back(name.get<std::string>());
    }
  }
  if (names.empty()) throw std::invalid_argument(usage);
  return names;
}

// The caller's arms, or the subset the "arms" option names.
std::vector<BenchArm> selected_arms(const nlohmann::json& options, const std::vector<BenchArm>& arms) {
  if (options.contains("schedule")) {
    if (options.contains("arms")) throw std::invalid_argument("bench options arms and schedule exclude each other");
    const auto schedule = text(options, "schedule", "");
    return {{schedule, schedule}};
  }
  if (arms.empty()) throw std::invalid_argument("no arms given; the caller passes the arms to compare");
  if (!options.contains("arms")) return arms;
  std::vector<BenchArm> selected;
  std::string known;
  for (const auto& arm : arms) known += (known.empty() ? "" : ", ") + arm.name;
  for (const auto& name : arm_names(options.at("arms"))) {
    const auto it = std::find_if(arms.begin(), arms.end(), [&](const BenchArm& arm) { return arm.name == name; });
    if (it == arms.end()) throw std::invalid_argument("bench option arms: unknown arm \"" + name + "\" (" + known + ")");
    selected.push_back(*it);
  }
  return selected;
}

double flops_per_token(const models::ModelConfig& c, std::int64_t T) {
  const auto b = models::parameter_breakdown(c);
  const double matmul = static_cast<double>(b.total() - b.embedding - b.norms) +
                        (c.tie_embeddings ? static_cast<double>(c.vocab_size * c.hidden_size) : 0.0);
  const auto counts = models::count_mixers(c.schedule);
  const double qk = static_cast<double>(c.mla.qk_nope_head_dim + c.mla.qk_rope_head_dim);
  const double mla = 3.0 * static_cast<double>(T) * static_cast<double>(c.mla.num_heads) *
                     (qk + static_cast<double>(c.mla.v_head_dim));
  const double C = static_cast<double>(c.kda.chunk_size), K = static_cast<double>(c.kda.head_dim);
  const double kda = 6.0 * static_cast<double>(c.kda.num_heads) * (2 * C * K + C * K + 4 * K * K);
  return 6.0 * matmul + static_cast<double>(counts.mla) * mla + static_cast<double>(counts.kda) * kda;
}

void print_markdown(const nlohmann::json& report, std::ostream& out) {
  const auto& shape = report.at("shape");
  out << "train-step benchmark: device " << report.at("device").get<std::string>() << ", threads "
      << report.at("threads").get<int>() << ", d_model " << shape.at("d_model").get<std::int64_t>() << ", layers "
      << shape.at("n_layers").get<std::int64_t>() << ", heads " << shape.at("n_heads").get<std::int64_t>() << "x"
      << shape.at("head_dim").get<std::int64_t>() << ", T " << shape.at("sequence_length").get<std::int64_t>() << ", "
      << report.at("micro_batches").get<std::int64_t>() << " micro-batches of "
      << shape.at("batch_rows").get<std::int64_t>() << " rows per step (" << report.at("lanes").get<int>()
      << " side by side), " << report.at("steps").get<std::int64_t>() << " timed steps after "
      << report.at("warmup").get<std::int64_t>() << " warmup\n\n";
  const auto& policy = report.at("settings").at("thread_policy");
  out << "threads: " << policy.at("threads").get<int>() << " (" << policy.at("source").get<std::string>()
      << "); LibTorch intra-op " << policy.at("intra_op").get<int>() << ", inter-op " << policy.at("inter_op").get<int>()
      << "; BLAS " << policy.at("blas").dump() << "; OMP_WAIT_POLICY " << policy.at("openmp_wait_policy").get<std::string>()
      << ", GOMP_SPINCOUNT " << policy.at("openmp_spin_count").get<std::string>()
      << "; allocator " << report.at("settings").at("allocator").dump() << "\n\n";
  out << "| arm | schedule | parameters | tokens/s (median step) | step ms median [min, max] | cores busy | "
         "model GFLOP/token | MFU |\n";
  out << "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : report.at("arms")) {
    std::ostringstream line;
    line << std::fixed << "| " << r["arm"].get<std::string>() << " | " << r["schedule"].get<std::string>() << " | "
         << r["parameters"].get<std::int64_t>() << " | " << std::setprecision(0) << r["tokens_per_s"].get<double>()
         << " | " << std::setprecision(2) << r["step_ms"].get<double>() << " [" << r["step_ms_min"].get<double>() << ", "
         << r["step_ms_max"].get<double>() << "] | " << r["cores_busy"].get<double>() << " | " << std::setprecision(4)
         << r["model_flops_per_token"].get<double>() / 1e9 << " | ";
    if (r["mfu"].is_null()) line << "n/a";
    else line << std::setprecision(2) << 100.0 * r["mfu"].get<double>() << "%";
    out << line.str() << " |\n";
  }
  out << "\nMFU = model FLOPs/token x tokens/s / peak FLOP/s"
      << (report.at("peak_flops").is_null() ? " (no peak on CPU: pass peak_flops)" : "")
      << "; model FLOPs are an estimate (see include/k3lab/train/bench.hpp). fp32 weights.\n";
}

double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Step times over the timed steps: median (what tokens/s uses), min and max; and the CPU time the
// process used per second of wall time while they ran (1.0: one busy core).
struct StepTimes {
  std::vector<double> seconds;
  double cores_busy = 0;
};

StepTimes time_steps(const std::function<void()>& step, std::int64_t steps, const torch::Device& device) {
  StepTimes times;
  const double cpu_start = process_cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    synchronize(device);
    times.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  times.cores_busy = (process_cpu_seconds() - cpu_start) / wall;
  std::sort(times.seconds.begin(), times.seconds.end());
  return times;
}

double median_of_sorted(const std::vector<double>& v) {
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Options' peak_flops, else the H200's bf16 peak on a GPU; none on the CPU.
std::optional<double> peak_flops(const nlohmann::json& options, const torch::Device& device) {
  if (options.contains("peak_flops")) {
    if (!options.at("peak_flops").is_number() || !(options.at("peak_flops").get<double>() > 0)) {
      throw std::invalid_argument("bench option peak_flops: expected a positive number (FLOP/s), got " +
                                  options.at("peak_flops").dump());
    }
    return options.at("peak_flops").get<double>();
  }
  if (device.is_cuda()) return kH200Bf16Matmul.flops_per_second;
  return std::nullopt;
}

// One step's tokens and how the trainer would take them: micro-batches of equal rows, `lanes` at once.
struct StepData {
  torch::Tensor inputs;   // (micro_batches x rows, T)
  torch::Tensor targets;  // (micro_batches x rows, T)
  std::int64_t micro_batches = 1;
  int lanes = 1;
  int threads = 1;
};

// The trainer's kind of step (zero_grad; per micro-batch forward, cross-entropy, backward, side by side
// where lanes > 1; AdamW), warmed up, then timed.
StepTimes time_training_step(models::DecoderLM& model, const StepData& data, std::int64_t warmup, std::int64_t steps,
                             const torch::Device& device) {
  auto optimizer = make_optimizer(OptimizerSpec{}, *model);
  const auto parameters = trainable_parameters(*model);
  const std::int64_t rows = data.inputs.size(0) / data.micro_batches;
  auto step = [&] {
    optimizer->zero_grad();
    run_in_lanes(
        data.lanes, data.threads, data.micro_batches,
        [&](std::int64_t i, bool apart) {
          const auto inputs = data.inputs.slice(0, i * rows, (i + 1) * rows);    // (rows, T)
          const auto targets = data.targets.slice(0, i * rows, (i + 1) * rows);  // (rows, T)
          const auto logits = model->forward(inputs);                            // (rows, T, V)
          const auto loss =
              torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1})) /
              static_cast<double>(data.micro_batches);
          return MicroBatchGradient{loss.item<double>(), nullptr, backward_micro_batch(loss, parameters, apart)};
        },
        [&](std::int64_t, MicroBatchGradient& g) {
          accumulate_gradients(parameters, g.gradients);
          return true;
        });
    optimizer->step();
  };
  for (std::int64_t i = 0; i < warmup; ++i) step();
  synchronize(device);
  reset_peak_memory(device);
  return time_steps(step, steps, device);
}

// What the numbers ran with: the thread pools and the allocator (core/allocator_policy.hpp).
nlohmann::json run_settings(const nlohmann::json& thread_policy) {
  return {{"thread_policy", thread_policy}, {"allocator", core::allocator_policy().to_json()}};
}

// "cuda: NVIDIA H200" or "cpu: <model>, <n> threads": what a throughput record was measured on.
std::string device_description(const torch::Device& device) {
  if (device.is_cuda()) {
    const auto facts = core::this_machine("cuda");
    return "cuda: " +
           (facts.accelerator && !facts.accelerator->model.empty() ? facts.accelerator->model : "unknown GPU");
  }
  return "cpu: " + core::this_machine("cpu").cpu_model + ", " + std::to_string(torch::get_num_threads()) + " threads";
}

void append_records(const std::filesystem::path& file, const nlohmann::json& report, const torch::Device& device) {
  const auto date = core::format_utc_seconds(std::chrono::system_clock::now());
  const auto where = device_description(device);
  for (const auto& row : report.at("arms")) {
    ThroughputRecord record;
    record.device = where;
    record.date = date;
    record.arm = row.at("arm").get<std::string>();
    record.shape = ThroughputShape::from_json(row.at("shape"));
    record.tokens_per_s = row.at("tokens_per_s").get<double>();
    record.steps = report.at("steps").get<std::int64_t>();
    record.warmup = report.at("warmup").get<std::int64_t>();
    append_throughput_record(file, record);
  }
}

}  // namespace

models::ModelConfig bench_model_config(const ThroughputShape& shape) {
  models::ModelConfig c;
  c.vocab_size = shape.vocab_size;
  c.hidden_size = shape.d_model;
  c.schedule = shape.schedule;
  c.kda.num_heads = shape.n_heads;
  c.kda.head_dim = shape.head_dim;
  c.kda.chunk_size = shape.kda_chunk_size;
  c.mla.num_heads = shape.n_heads;
  c.mla.q_lora_rank = 0;
  c.mla.kv_lora_rank = shape.mla_kv_latent_dim;
  c.mla.qk_nope_head_dim = shape.head_dim;
  c.mla.qk_rope_head_dim = std::max<std::int64_t>(1, shape.head_dim / 2);
  c.mla.v_head_dim = shape.head_dim;
  c.ffn.kind = models::FfnKind::SwiGlu;
  c.ffn.intermediate_size = shape.ffn_size;
  c.tie_embeddings = true;
  return c;
}

BenchShape bench_shape(const models::ModelConfig& model, std::int64_t sequence_length, std::int64_t batch_rows) {
  ThroughputShape shape;
  shape.schedule = model.schedule;
  shape.d_model = model.hidden_size;
  shape.n_heads = model.kda.num_heads;
  shape.head_dim = model.kda.head_dim;
  shape.mla_kv_latent_dim = model.mla.kv_lora_rank;
  shape.kda_chunk_size = model.kda.chunk_size;
  shape.ffn_size = model.ffn.intermediate_size;
  shape.vocab_size = model.vocab_size;
  shape.sequence_length = sequence_length;
  shape.batch_rows = batch_rows;
  const nlohmann::json wanted = model, built = bench_model_config(shape);
  std::string differences;
  for (const auto& change : nlohmann::json::diff(built, wanted)) {
    differences += (differences.empty() ? "" : ", ") + change.at("path").get<std::string>();
  }
  if (differences.empty()) return {shape, ""};
  return {std::nullopt,
          "`k3lab bench train` builds hybrid-attention's KDA/MLA decoder; this arm's model differs at " + differences};
}

std::string bench_train_command(const ThroughputShape& s, const std::string& device,
                                const std::filesystem::path& record_file) {
  std::string command = "k3lab bench train";
  const auto opt = [&](const std::string& key, const std::string& value) { command += " --opt " + key + "=" + value; };
  opt("schedule", s.schedule);
  opt("d_model", std::to_string(s.d_model));
  opt("n_heads", std::to_string(s.n_heads));
  opt("head_dim", std::to_string(s.head_dim));
  opt("mla_kv_latent_dim", std::to_string(s.mla_kv_latent_dim));
  opt("kda_chunk_size", std::to_string(s.kda_chunk_size));
  opt("ffn_size", std::to_string(s.ffn_size));
  opt("vocab_size", std::to_string(s.vocab_size));
  opt("sequence_length", std::to_string(s.sequence_length));
  opt("batch_rows", std::to_string(s.batch_rows));
  opt("device", device);
  return command + " --record " + record_file.string();
}

int run_train_bench(const nlohmann::json& options, std::ostream& out, const std::vector<BenchArm>& arms) {
  try {
    if (!options.is_object()) throw std::invalid_argument("bench options must be a JSON object");
    static const std::set<std::string> known = {
        "d_model",        "n_layers", "n_heads",    "head_dim",        "mla_kv_latent_dim",
        "kda_chunk_size", "ffn_size", "vocab_size", "sequence_length", "batch_rows",
        "steps",          "warmup",   "device",     "threads",         "peak_flops",
        "arms",           "schedule", "output",     "record",          "micro_batches"};
    for (auto it = options.begin(); it != options.end(); ++it) {
      if (!known.count(it.key())) throw std::invalid_argument("bench: unknown option \"" + it.key() + "\"");
    }
    const auto D = integer(options, "d_model", 256);
    const std::int64_t schedule_layers =
        options.contains("schedule") ? static_cast<std::int64_t>(text(options, "schedule", "").size()) : 4;
    const auto L = integer(options, "n_layers", schedule_layers);
    const auto H = integer(options, "n_heads", 4);
    const auto hd = integer(options, "head_dim", 64);
    const auto T = integer(options, "sequence_length", 512);
    const auto B = integer(options, "batch_rows", 2);  // rows per forward: the training micro-batch
    const auto micro_batches = integer(options, "micro_batches", 2);
    const auto steps = integer(options, "steps", 5);
    const auto warmup = integer(options, "warmup", 2);
    const auto V = integer(options, "vocab_size", 256);
    const int threads = static_cast<int>(integer(options, "threads", 0));
    if (L == 0) throw std::invalid_argument("bench option n_layers must be positive");
    if (steps == 0 || T < 2 || B == 0 || micro_batches == 0) {
      throw std::invalid_argument("bench: steps, batch_rows, micro_batches and sequence_length must be positive");
    }
    const auto thread_policy = apply_thread_policy(core::choose_thread_policy(threads));
    const auto device = resolve_device(text(options, "device", "auto"));
    const int threads_used = thread_policy.at("threads").get<int>();
    const int lanes = micro_batch_lanes(threads_used, micro_batches, device);
    const auto peak = peak_flops(options, device);
    const auto benched = selected_arms(options, arms);
    std::vector<std::string> schedules;  // all checked before any arm runs
    for (const auto& arm : benched) schedules.push_back(arm_schedule(arm, L));
    const std::string format = text(options, "output", "md");
    if (format != "md" && format != "json") throw std::invalid_argument("bench option output: md or json");

    ThroughputShape base;
    base.d_model = D;
    base.n_heads = H;
    base.head_dim = hd;
    base.mla_kv_latent_dim = integer(options, "mla_kv_latent_dim", 128);
    base.kda_chunk_size = integer(options, "kda_chunk_size", 64);
    base.ffn_size = integer(options, "ffn_size", 4 * D);
    base.vocab_size = V;
    base.sequence_length = T;
    base.batch_rows = B;

    core::Rng rng(20240520);
    const std::int64_t step_rows = micro_batches * B;
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(step_rows * (T + 1)));
    for (auto& t : tokens) t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(V)));
    const auto window = torch::from_blob(tokens.data(), {step_rows, T + 1}, torch::kInt64).clone().to(device);
    const auto inputs = window.slice(1, 0, T);
    const auto targets = window.slice(1, 1, T + 1);

    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t a = 0; a < benched.size(); ++a) {
      const auto& arm = benched[a];
      auto shape = base;
      shape.schedule = schedules[a];
      const auto config = bench_model_config(shape);
      models::DecoderLM model(config, 1);
      model->to(device);
      const auto times =
          time_training_step(model, {inputs, targets, micro_batches, lanes, threads_used}, warmup, steps, device);
      const double tokens_per_s = static_cast<double>(step_rows * T) / median_of_sorted(times.seconds);
      const double fpt = flops_per_token(config, T);
      nlohmann::json row = {{"arm", arm.name},
                            {"schedule", config.schedule},
                            {"shape", shape.to_json()},
                            {"parameters", models::count_parameters(config)},
                            {"tokens_per_s", tokens_per_s},
                            {"step_ms", 1000.0 * median_of_sorted(times.seconds)},
                            {"step_ms_min", 1000.0 * times.seconds.front()},
                            {"step_ms_max", 1000.0 * times.seconds.back()},
                            {"cores_busy", times.cores_busy},
                            {"model_flops_per_token", fpt},
                            {"mfu", peak ? nlohmann::json(fpt * tokens_per_s / *peak) : nlohmann::json(nullptr)}};
      if (const auto bytes = peak_memory_bytes(device)) row["peak_training_bytes"] = *bytes;
      rows.push_back(row);
    }
    nlohmann::json report = {{"device", device.str()},
                             {"threads", torch::get_num_threads()},
                             {"settings", run_settings(thread_policy)},
                             {"shape",
                              {{"d_model", D},
                               {"n_layers", L},
                               {"n_heads", H},
                               {"head_dim", hd},
                               {"sequence_length", T},
                               {"batch_rows", B},
                               {"vocab_size", V}}},
                             {"micro_batches", micro_batches},
                             {"lanes", lanes},
                             {"steps", steps},
                             {"warmup", warmup},
                             {"peak_flops", peak ? nlohmann::json(*peak) : nlohmann::json(nullptr)},
                             {"arms", rows}};
    if (options.contains("record")) {
      const std::filesystem::path file = options.at("record").get<std::string>();
      append_records(file, report, device);
      report["record_file"] = file.string();
    }
    if (format == "json") {
      out << report.dump(2) << "\n";
      return 0;
    }
    print_markdown(report, out);
    if (report.contains("record_file")) {
      out << "records: " << rows.size() << " appended to " << report.at("record_file").get<std::string>()
          << " (`k3lab plan <id> --profile full` uses a record whose device and shape match an arm)\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench train: " << e.what() << "\n";
    return 2;
  }
}

std::vector<BenchArm> default_bench_arms() {
  return {{"full-attention", "M"}, {"all-kda", "K"}, {"hybrid-3kda-1mla", "KKKM"}};
}

}  // namespace k3lab::train
