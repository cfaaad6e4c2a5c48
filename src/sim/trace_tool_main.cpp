// k3lab_trace_tool: the memory-pool trace chores that are not experiment runs.
//   k3lab_trace_tool write-retained [--profile full|smoke] [--protocol FILE] [--root DIR]
//   k3lab_trace_tool import --format burstgpt|azure --csv IN.csv --out OUT.k3tr [--skip-bad-rows]
//   k3lab_trace_tool info FILE.k3tr
//   k3lab_trace_tool bench [JSON options of run_memory_pool_bench]
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "k3lab/core/protocol.hpp"
#include "k3lab/sim/bench.hpp"
#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/trace_csv.hpp"
#include "k3lab/sim/trace_file.hpp"
#include "k3lab/sim/trace_source.hpp"

namespace {

const char* kUsage =
    "usage:\n"
    "  k3lab_trace_tool write-retained [--profile full|smoke] [--protocol FILE] [--root DIR]\n"
    "  k3lab_trace_tool import --format burstgpt|azure --csv IN.csv --out OUT.k3tr [--skip-bad-rows]\n"
    "  k3lab_trace_tool info FILE.k3tr\n"
    "  k3lab_trace_tool bench ['{\"mix\": \"...\", \"profile\": \"full\"}']\n";

std::map<std::string, std::string> parse_flags(const std::vector<std::string>& args, std::size_t from,
                                               const std::vector<std::string>& valued,
                                               const std::vector<std::string>& switches) {
  std::map<std::string, std::string> flags;
  for (std::size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
      flags.insert_or_assign(a, std::string(1, '1'));
    } else if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      flags[a] = args[++i];
    } else {
      throw std::invalid_argument("unknown argument \"" + a + "\"\n" + kUsage);
    }
  }
  return flags;
}

int run(const std::vector<std::string>& args) {
  using namespace k3lab;
  if (args.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string& command = args[1];
  if (command == "write-retained") {
    auto flags = parse_flags(args, 2, {"--profile", "--protocol", "--root"}, {});
    const std::filesystem::path protocol_file =
        flags.count("--protocol") ? std::filesystem::path(flags["--protocol"]) : core::protocol_path("memory-pool");
    const core::Protocol protocol = core::load_protocol(protocol_file, &sim::parameter_schema());
    const auto params = sim::parse_parameters(protocol.parameters_for(flags.count("--profile") ? flags["--profile"] : "full"));
    const std::filesystem::path root = flags.count("--root")
                                           ? std::filesystem::path(flags["--root"])
                                           : std::filesystem::absolute(protocol_file).parent_path().parent_path();
    std::cout << sim::write_retained_traces(params, root).dump(2) << "\n";
    return 0;
  }
  if (command == "import") {
    auto flags = parse_flags(args, 2, {"--format", "--csv", "--out"}, {"--skip-bad-rows"});
    for (const char* required : {"--format", "--csv", "--out"}) {
      if (!flags.count(required)) throw std::invalid_argument(std::string(required) + " is required\n" + kUsage);
    }
    sim::CsvImportOptions options;
    options.format = sim::parse_csv_trace_format(flags["--format"]);
    options.skip_bad_rows = flags.count("--skip-bad-rows") > 0;
    sim::CsvImportReport report;
    const sim::Trace trace = sim::import_trace_csv_file(flags["--csv"], options, &report);
    sim::write_trace_file(flags["--out"], trace);
    std::cout << "imported " << report.imported << " of " << report.data_rows << " rows (" << report.skipped
              << " skipped, " << report.out_of_order << " out of order, sorted)\n";
    for (const auto& p : report.problems) std::cout << "  skipped: " << p << "\n";
    std::cout << "sha256 " << sim::trace_sha256(trace) << "\n";
    return 0;
  }
  if (command == "info") {
    if (args.size() != 3) throw std::invalid_argument(kUsage);
    std::string sha;
    const sim::Trace trace = sim::read_trace_file(args[2], &sha);
    double prompt = 0, output = 0;
    for (const auto& r : trace.records) {
      prompt += r.prompt_tokens;
      output += r.output_tokens;
    }
    const double n = std::max<double>(1, static_cast<double>(trace.size()));
    std::cout << "source " << trace.source << "\nrecords " << trace.size() << "\ngenerator_seed " << std::hex
              << trace.generator_seed << std::dec << "\nlast_arrival_seconds " << trace.last_arrival_us() / 1e6
              << "\nmean_prompt_tokens " << prompt / n << "\nmean_output_tokens " << output / n << "\nsha256 " << sha
              << "\n";
    return 0;
  }
  if (command == "bench") {
    const nlohmann::json options = args.size() > 2 ? nlohmann::json::parse(args[2]) : nlohmann::json::object();
    return sim::run_memory_pool_bench(options, std::cout);
  }
  std::cerr << "unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
