// `k3lab plan` prices each arm from a `k3lab bench train` throughput record when one matches the arm's
// device and shape, and from the assumed-peak floor otherwise, saying which; a malformed record line is
// named and skipped. Through the binary and files only. No speed is asserted: the measured figure is
// recomputed here from the record the test wrote or read.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

nlohmann::json priced_plan(const std::vector<std::string>& extra, ProcessResult* result = nullptr) {
  std::vector<std::string> args = {"plan", "hybrid-attention", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_k3lab(args);
  if (result) *result = r;
  EXPECT_EQ(r.exit_code, 0) << command_line(args) << "\n" << r.output();
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& priced_arm(const nlohmann::json& plan, const std::string& arm) {
  for (const auto& entry : plan.at("details").at("gpu_hours_by_arm")) {
    if (entry.at("arm") == arm) return entry;
  }
  throw std::runtime_error("no gpu_hours_by_arm entry for " + arm);
}

nlohmann::json throughput_record_line(const std::string& device, const nlohmann::json& shape, double tokens_per_s,
                                      const std::string& date) {
  return {{"record", "k3lab-train-throughput"},
          {"version", 1},
          {"device", device},
          {"date", date},
          {"arm", "written"},
          {"shape", shape},
          {"tokens_per_s", tokens_per_s},
          {"steps", 5},
          {"warmup", 2}};
}

bool basis_starts_with(const nlohmann::json& text, const std::string& prefix) {
  return text.get<std::string>().rfind(prefix, 0) == 0;
}

TEST(PlanThroughput, AMatchingRecordPricesItsArmAndTheOthersKeepTheFloor) {
  const TempDir dir("k3lab-plan-throughput");
  const auto records = (dir.path() / "records.jsonl").string();
  const auto before = priced_plan({"--profile", "full", "--bench-records", records});
  // The full shape, by hand from experiments/hybrid-attention.json: 12 layers of width 768, 12 heads x 64,
  // 256 latent, chunk 64, vocabulary 50,304, T 8,000; the automatic micro-batch is 16,384 / 8,000 = 2 rows,
  // which does not divide the 25 rows of a 200,000-token step, so 1.
  const auto full_shape = priced_arm(before, "full-attention").at("shape");
  EXPECT_EQ(full_shape.at("schedule"), "MMMMMMMMMMMM");
  EXPECT_EQ(full_shape.at("d_model"), 768);
  EXPECT_EQ(full_shape.at("n_heads"), 12);
  EXPECT_EQ(full_shape.at("head_dim"), 64);
  EXPECT_EQ(full_shape.at("mla_kv_latent_dim"), 256);
  EXPECT_EQ(full_shape.at("kda_chunk_size"), 64);
  EXPECT_EQ(full_shape.at("vocab_size"), 50304);
  EXPECT_EQ(full_shape.at("sequence_length"), 8000);
  EXPECT_EQ(full_shape.at("batch_rows"), 1);
  const auto kda_shape = priced_arm(before, "all-kda").at("shape");
  EXPECT_EQ(kda_shape.at("schedule"), "KKKKKKKKKKKK");
  auto hybrid_other_batch = priced_arm(before, "hybrid-3kda-1mla").at("shape");
  hybrid_other_batch["batch_rows"] = 5;

  const double tokens_per_s = 123456.5;
  {
    std::ofstream out(records);
    out << throughput_record_line("cuda: NVIDIA H200", full_shape, 1000.0, "2026-01-01T00:00:00Z").dump() << "\n";
    out << throughput_record_line("cuda: NVIDIA H200", full_shape, tokens_per_s, "2026-06-01T00:00:00Z").dump()
        << "\n";                                                                       // newer
    out << "{\"record\": \"k3lab-train-throughput\", \"version\": 1, \"device\": \n";  // malformed
    out << throughput_record_line("cuda: NVIDIA A100-SXM4-80GB", kda_shape, 5e5, "2026-06-01T00:00:00Z").dump() << "\n";
    out << throughput_record_line("cuda: NVIDIA H200", hybrid_other_batch, 5e5, "2026-06-01T00:00:00Z").dump() << "\n";
  }
  ProcessResult run;
  const auto plan = priced_plan({"--profile", "full", "--bench-records", records}, &run);
  EXPECT_NE(run.err.find(records + ":3: "), std::string::npos) << run.err;

  // 1e9 training tokens per run (token_budget) over the newer matching record's rate.
  const auto& full = priced_arm(plan, "full-attention");
  const double measured = 1e9 / tokens_per_s / 3600.0;
  EXPECT_NEAR(full.at("gpu_hours_per_run").get<double>(), measured, 1e-12 * measured);
  EXPECT_NEAR(full.at("gpu_hours_total").get<double>(), 3 * measured, 3e-12 * measured);
  EXPECT_TRUE(basis_starts_with(full.at("basis"), "measured: cuda: NVIDIA H200 | MMMMMMMMMMMM d768 h12x64"))
      << full.dump();
  EXPECT_NE(full.at("basis").get<std::string>().find("2026-06-01T00:00:00Z"), std::string::npos);
  EXPECT_FALSE(full.contains("bench_command"));

  // 6 x 120e6 x 1e9 FLOPs at 40% of 795 TFLOP/s: the floor, for the A100 record and the other micro-batch.
  const double floor = 6 * 120e6 * 1e9 / (0.4 * 795e12) / 3600.0;
  for (const char* arm : {"all-kda", "hybrid-3kda-1mla"}) {
    const auto& entry = priced_arm(plan, arm);
    EXPECT_NEAR(entry.at("gpu_hours_per_run").get<double>(), floor, 1e-9) << arm;
    EXPECT_TRUE(basis_starts_with(entry.at("basis"), "floor (no benchmark record for this device and shape"))
        << entry.dump();
    const auto command = entry.at("bench_command").get<std::string>();
    EXPECT_TRUE(command.rfind("k3lab bench train --opt schedule=", 0) == 0) << command;
    EXPECT_NE(command.find("--opt device=cuda"), std::string::npos) << command;
    EXPECT_NE(command.find("--record " + records), std::string::npos) << command;
  }
  EXPECT_EQ(plan.at("details").at("throughput_records").at("records_read"), 4);
  EXPECT_EQ(plan.at("details").at("throughput_records").at("warnings").size(), 1u);
  // The floor stays in the plan's estimate (the Slurm executor sizes time limits from it).
  EXPECT_NEAR(plan.at("details").at("estimate").at("gpu_hours_per_run").get<double>(), floor, 1e-9);

  const auto text = run_k3lab({"plan", "hybrid-attention", "--profile", "full", "--bench-records", records});
  ASSERT_EQ(text.exit_code, 0) << text.output();
  EXPECT_NE(text.out.find("full-attention: 3 runs x 1,000,000,000 tokens: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("; measured: cuda: NVIDIA H200 | MMMMMMMMMMMM"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    measure with: k3lab bench train --opt schedule=KKKKKKKKKKKK"), std::string::npos);
  EXPECT_NE(text.err.find("warning: " + records + ":3: "), std::string::npos) << text.err;
}

std::vector<std::string> command_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(PlanThroughput, TheBenchCommandThePlanPrintsWritesARecordThePlanThenMatches) {
  const TempDir dir("k3lab-plan-bench-record");
  const auto records = (dir.path() / "bench" / "train.jsonl").string();
  const std::vector<std::string> cpu = {"--profile", "smoke", "--bench-records", records, "--bench-device", "cpu"};
  const auto before = priced_plan(cpu);
  const auto& unmeasured = priced_arm(before, "all-kda");
  ASSERT_TRUE(unmeasured.contains("bench_command")) << unmeasured.dump();
  auto args = command_words(unmeasured.at("bench_command").get<std::string>());
  ASSERT_EQ(args.front(), "k3lab");
  args.erase(args.begin());
  for (const char* fast : {"steps=1", "warmup=0", "threads=1"}) {  // time, not shape
    args.push_back("--opt");
    args.push_back(fast);
  }
  const auto bench = run_k3lab(args);
  ASSERT_EQ(bench.exit_code, 0) << command_line(args) << "\n" << bench.output();

  std::ifstream in(records);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << "no record in " << records;
  const auto record = nlohmann::json::parse(line);
  EXPECT_FALSE(std::getline(in, line)) << "one arm benched, one record expected";
  EXPECT_EQ(record.at("shape"), unmeasured.at("shape"));
  EXPECT_EQ(record.at("device").get<std::string>().rfind("cpu: ", 0), 0u) << record.dump();

  const auto after = priced_plan(cpu);
  const auto& measured = priced_arm(after, "all-kda");
  const double tokens = measured.at("tokens_per_run").get<double>();
  EXPECT_EQ(tokens, 512);  // the smoke token_budget
  const double hours = tokens / record.at("tokens_per_s").get<double>() / 3600.0;
  EXPECT_NEAR(measured.at("gpu_hours_per_run").get<double>(), hours, 1e-12 * hours);
  EXPECT_TRUE(basis_starts_with(measured.at("basis"), "measured: " + record.at("device").get<std::string>()));
  // The other arms were not benched: still the floor.
  EXPECT_TRUE(basis_starts_with(priced_arm(after, "full-attention").at("basis"), "floor (no benchmark record"));
  // The same record does not count for the device the protocol names.
  const auto h200 = priced_plan({"--profile", "smoke", "--bench-records", records});
  EXPECT_TRUE(basis_starts_with(priced_arm(h200, "all-kda").at("basis"), "floor (no benchmark record"));
}

TEST(PlanThroughput, ArmsTheBenchCannotBuildSayWhyAndKeepTheFloor) {
  const auto r = run_k3lab({"plan", "router-balance", "--profile", "full", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output();
  const auto plan = nlohmann::json::parse(r.out);
  for (const auto& arm : plan.at("details").at("gpu_hours_by_arm")) {
    EXPECT_TRUE(arm.at("shape").is_null());
    EXPECT_TRUE(
        basis_starts_with(arm.at("basis"), "floor (no benchmark record can match: router-balance trains its MoE"));
    EXPECT_EQ(arm.at("gpu_hours_per_run"), arm.at("floor_gpu_hours_per_run"));
  }
}

}  // namespace
}  // namespace k3lab::testing
