#include "cli/plan_costs.hpp"

#include <cmath>
#include <cstddef>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>

#include "k3lab/models/training_memory.hpp"

namespace k3lab::cli {
namespace {

// Whole numbers grouped by thousands ("1,000,000,000").
std::string count(double n) {
  std::string digits = std::to_string(std::llround(n));
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > (digits[0] == '-' ? 1 : 0); i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return digits;
}

// Two significant digits below 100 hours, as the rest of the plan prints hours; whole hours above.
std::string hours(double h) {
  if (h >= 100) return count(h);
  std::ostringstream text;
  text << std::setprecision(2) << h;
  return text.str();
}

std::string share(double s) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << 100.0 * s << "%";
  return text.str();
}

std::string gb(const nlohmann::json& bytes) { return models::gigabytes(bytes.get<std::int64_t>()); }

// "    memory per training step (...): 52.1 GB of the H200's 141.0 GB: fits", then its parts.
void print_memory(const nlohmann::json& m, std::ostream& out) {
  const auto rows = m.at("micro_batch_rows").get<std::int64_t>();
  out << "    memory per training step (" << rows << (rows == 1 ? " row x " : " rows x ")
      << count(m.at("sequence_length").get<double>()) << " tokens, float32): " << gb(m.at("total_bytes")) << " of the "
      << m.at("device").get<std::string>() << "'s " << gb(m.at("device_memory_bytes")) << ": "
      << (m.at("fits").get<bool>() ? "fits" : "DOES NOT FIT (run refuses it on such a device)") << "\n";
  std::string saved;
  for (const auto& [what, bytes] : m.at("activations").items()) {
    if (bytes.get<std::int64_t>() > 0) saved += (saved.empty() ? "" : ", ") + what + " " + gb(bytes);
  }
  const auto& transients = m.at("transients");
  const auto largest = m.at("largest_transient").get<std::string>();
  out << "      parameters " << gb(m.at("parameters_bytes")) << ", gradients " << gb(m.at("gradients_bytes"))
      << ", optimizer state " << gb(m.at("optimizer_state_bytes")) << "; saved activations "
      << gb(m.at("activation_bytes")) << " (" << saved << "); largest transient: " << largest << " "
      << gb(transients.value(largest, nlohmann::json(0))) << "\n";
}

void print_arms(const nlohmann::json& details, std::ostream& out) {
  const auto& source = details.value("throughput_records", nlohmann::json::object());
  out << "GPU-hours by arm (benchmark records: " << source.value("file", std::string("not read")) << ", device "
      << source.value("device_kind", std::string("?")) << "):\n";
  for (const auto& arm : details.at("gpu_hours_by_arm")) {
    out << "  " << arm.at("arm").get<std::string>() << ": " << arm.at("runs").get<std::size_t>() << " runs x "
        << count(arm.at("tokens_per_run").get<double>()) << " tokens: ";
    if (arm.contains("gpu_hours_per_run")) {
      out << hours(arm.at("gpu_hours_per_run").get<double>()) << " GPU-hours per run, "
          << hours(arm.at("gpu_hours_total").get<double>()) << " in all; " << arm.at("basis").get<std::string>()
          << "\n";
    } else {
      out << hours(arm.at("floor_gpu_hours_per_run").get<double>()) << " GPU-hours per run (floor)\n";
    }
    if (arm.contains("measured")) {
      out << "    floor for comparison: " << hours(arm.at("floor_gpu_hours_per_run").get<double>())
          << " GPU-hours per run\n";
    }
    if (arm.contains("bench_command"))
      out << "    measure with: " << arm.at("bench_command").get<std::string>() << "\n";
    if (arm.contains("evaluation_gpu_hours_per_run")) {
      out << "    evaluation at this rate: " << hours(arm.at("evaluation_gpu_hours_per_run").get<double>())
          << " GPU-hours per run\n";
    }
    if (arm.contains("memory")) print_memory(arm.at("memory"), out);
  }
}

void print_evaluation(const nlohmann::json& cost, std::ostream& out) {
  out << "evaluation cost: " << count(cost.at("forward_tokens_per_run").get<double>()) << " evaluated tokens per run, "
      << hours(cost.at("gpu_hours_per_run").get<double>()) << " GPU-hours per run at the floor's rate ("
      << hours(cost.at("gpu_hours_total").get<double>()) << " in all), "
      << share(cost.at("share_of_training").get<double>()) << " of training time\n";
  for (const auto& part : cost.at("parts")) {
    std::string fields;
    for (const auto& f : part.at("fields")) fields += (fields.empty() ? "" : ", ") + f.get<std::string>();
    out << "  " << part.at("what").get<std::string>() << " (" << fields
        << "): " << count(part.at("tokens_per_run").get<double>()) << " tokens per run, "
        << share(part.at("share_of_training").get<double>()) << " of training\n";
  }
  out << "  basis: " << cost.at("basis").get<std::string>() << "\n";
  if (cost.contains("warning")) out << "warning: " << cost.at("warning").get<std::string>() << "\n";
}

}  // namespace

void print_plan_costs(const nlohmann::json& details, std::ostream& out) {
  if (!details.is_object()) return;
  if (details.contains("gpu_hours_by_arm")) print_arms(details, out);
  if (details.contains("evaluation_cost")) print_evaluation(details.at("evaluation_cost"), out);
}

nlohmann::json without_plan_costs(nlohmann::json details) {
  if (!details.is_object()) return details;
  for (const char* key : {"gpu_hours_by_arm", "evaluation_cost", "throughput_records"}) details.erase(key);
  return details;
}

}  // namespace k3lab::cli
