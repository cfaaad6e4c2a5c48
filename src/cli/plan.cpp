#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/bench_pricing.hpp"
#include "cli/plan_costs.hpp"
#include "k3lab/train/hardware_peak.hpp"

namespace k3lab::cli {

void register_plan(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("plan", "The frozen ledger of a protocol (units and counts), its evidence class, "
                                         "estimates, and what a result can and cannot say");
  struct Options {
    std::string id;
    std::string profile = "smoke";  // as for `run`: the cheap one unless asked
    bool json = false;
    bool units = false;
    std::string bench_records;
    std::string bench_device = train::kH200Bf16Matmul.device;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("experiment", opt->id, "Experiment id (see `k3lab list`)")->required();
  cmd->add_option("--profile", opt->profile, "Profile: full (the seed exactly) or smoke (toy sizes); smoke by default, as for `run`")
      ->check(CLI::IsMember({"full", "smoke"}))
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "Print the plan as JSON");
  cmd->add_flag("--units", opt->units, "List every unit id of the frozen ledger");
  cmd->add_option("--bench-records", opt->bench_records,
                  "Throughput records of `k3lab bench train` to price arms from (default: bench-records/train.jsonl "
                  "beside the k3lab binary)");
  cmd->add_option("--bench-device", opt->bench_device,
                  "Device whose records count: text in the record's device name, case-insensitive (e.g. cpu)")
      ->capture_default_str();
  cmd->callback([opt, &ctx] {
    auto loaded = load(opt->id);
    const auto& protocol = loaded.protocol;
    const auto parameters = protocol.parameters_for(opt->profile);
    const auto units = loaded.experiment->enumerate(protocol, parameters);
    auto details = loaded.experiment->plan_details(protocol, parameters, units);
    price_arms_from_bench_records(details, opt->bench_records, opt->bench_device);
    const auto freeze = core::check_freeze(protocol);
    nlohmann::json arms = nlohmann::json::array();
    for (const auto& arm : protocol.arms) {
      arms.push_back({{"id", arm.id}, {"description", arm.description}, {"requested_by_seed", arm.requested_by_seed}});
    }
    if (opt->json) {
      nlohmann::json j = {{"experiment", protocol.id},
                          {"title", protocol.title},
                          {"evidence_class", protocol.evidence_class},
                          {"profile", opt->profile},
                          {"protocol_sha256", protocol.hash()},
                          {"freeze", freeze_label(freeze)},
                          {"arms", arms},
                          {"units", units.size()},
                          {"details", details},
                          {"parameters", parameters},
                          {"can_say", protocol.can_say},
                          {"cannot_say", protocol.cannot_say}};
      if (opt->units) {
        nlohmann::json ids = nlohmann::json::array();
        for (const auto& u : units) ids.push_back(u.id);
        j["unit_ids"] = ids;
      }
      std::cout << j.dump(2) << "\n";
      return;
    }
    auto& out = std::cout;
    out << protocol.id << ": " << protocol.title << "\n";
    out << "evidence class: " << protocol.evidence_class << "\n";
    out << "protocol: " << protocol.path.string() << " sha256 " << protocol.hash().substr(0, 16) << " ("
        << freeze_label(freeze);
    if (freeze.record) out << ", record of " << freeze.record->frozen_at << " at rev " << freeze.record->source_revision.substr(0, 12);
    out << ")\n";
    out << "profile: " << opt->profile << "\n";
    out << "arms:\n";
    for (const auto& arm : protocol.arms) {
      out << "  " << arm.id << (arm.requested_by_seed ? "" : " [reference arm, not requested by the seed]") << ": "
          << arm.description << "\n";
    }
    out << "frozen ledger: " << units.size() << " units\n";
    print_details(without_plan_costs(details), out, 2);
    print_plan_costs(details, out);
    if (opt->units) {
      for (const auto& u : units) out << "  " << u.id << "\n";
    }
    out << "transfer limit:\n  can say:\n";
    for (const auto& s : protocol.can_say) out << "    - " << s << "\n";
    out << "  cannot say:\n";
    for (const auto& s : protocol.cannot_say) out << "    - " << s << "\n";
    ctx.exit_code = 0;
  });
}

}  // namespace k3lab::cli
