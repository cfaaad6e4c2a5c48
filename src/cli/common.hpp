#pragma once
// Helpers shared by subcommands: loading a protocol with its module's schema, output formats.
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/core/freeze.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/registry.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::cli {

struct LoadedProtocol {
  std::unique_ptr<experiments::Experiment> experiment;
  core::Protocol protocol;
};

LoadedProtocol load(const std::string& id);

// "frozen", "EDITED after freeze", or "not frozen".
std::string freeze_label(const core::FreezeStatus& status);

// Prints a table as text (aligned columns), md, csv or json.
void print_table(const report::Table& table, const std::string& format, std::ostream& out);

// Pretty-prints nested plan details as indented "key: value" lines.
void print_details(const nlohmann::json& details, std::ostream& out, int indent = 2);

}  // namespace k3lab::cli
