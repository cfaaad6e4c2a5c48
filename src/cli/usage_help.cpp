// `k3lab help [command]`, examples under every command's --help, and a suggestion after a mistyped
// command or option (src/cli/commands.hpp).
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "k3lab/core/schema.hpp"

namespace k3lab::cli {
namespace {

// Two or three examples per command, shown at the end of its --help.
const std::vector<std::pair<std::string, std::string>>& example_table() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"list", "  k3lab list\n  k3lab list -o json"},
      {"plan", "  k3lab plan hybrid-attention --profile full\n  k3lab plan memory-pool --units\n"
               "  k3lab plan context-probe --profile full --json"},
      {"validate", "  k3lab validate --all\n  k3lab validate --experiment memory-pool my-protocol.json"},
      {"freeze", "  k3lab freeze --all\n  k3lab freeze memory-pool --analysis"},
      {"run", "  k3lab run --all --profile smoke\n  k3lab run situ-qat --profile full --device cuda --out runs\n"
              "  k3lab run context-probe --profile full --base-url http://127.0.0.1:8000/v1 --served-model kimi-k3"},
      {"report", "  k3lab report\n  k3lab report --runs /data/runs --out /data/report"},
      {"status", "  k3lab status memory-pool\n  k3lab status --all --out runs"},
      {"bench", "  k3lab bench train --opt threads=2\n  k3lab bench runner"},
      {"mock-server", "  k3lab mock-server --port 8000"},
      {"check-endpoint", "  k3lab check-endpoint --base-url http://127.0.0.1:8000/v1 --served-model kimi-k3"},
      {"fixture", "  k3lab fixture --help"},
      {"data", "  k3lab data manifest data/fineweb-edu-sample-10BT --source \"FineWeb-Edu sample-10BT, llm.c GPT-2 "
               "shards\" --licence \"ODC-By 1.0\"\n"
               "  k3lab data manifest data/jargon-file --tokenizer bytes --source \"Jargon File 4.4.7 (Debian "
               "jargon-text)\" --licence \"public domain\""},
  };
  return table;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// The command named `name`, or null (this CLI11 has no non-throwing lookup).
const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

CLI::App* find_command(CLI::App& app, const std::string& name) {
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

std::vector<std::string> long_option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const auto* option : command.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace

void add_examples(CLI::App& app) {
  for (const auto& [name, examples] : example_table()) {
    if (auto* command = find_command(app, name)) command->footer("Examples:\n" + examples);
  }
}

void register_help(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("help", "Show help for k3lab, or for one command (`k3lab help run`)");
  auto name = std::make_shared<std::string>();
  cmd->add_option("command", *name, "A command name");
  cmd->callback([&app, name, &ctx] {
    if (name->empty()) {
      std::cout << app.help();
      return;
    }
    const auto* command = find_command(app, *name);
    if (command == nullptr) {
      const auto guess = core::did_you_mean(*name, command_names(app));
      throw std::invalid_argument("help: no command \"" + *name + "\"" +
                                  (guess ? "; did you mean \"" + *guess + "\"?" : std::string()) +
                                  " (`k3lab help` lists them)");
    }
    std::cout << command->help();
    ctx.exit_code = 0;
  });
}

std::string usage_suggestion(const CLI::App& app, const std::vector<std::string>& argv) {
  if (argv.size() < 2) return "";
  const std::string& first = argv[1];
  if (first.rfind("-", 0) != 0 && find_command(app, first) == nullptr) {
    const auto guess = core::did_you_mean(first, command_names(app));
    return "k3lab: unknown command \"" + first + "\"" + (guess ? "; did you mean \"" + *guess + "\"?" : std::string()) +
           " (`k3lab help` lists the commands)";
  }
  const auto* command = find_command(app, first);
  if (command == nullptr) return "";
  const auto known = long_option_names(*command);
  for (std::size_t i = 2; i < argv.size(); ++i) {
    const std::string word = argv[i].substr(0, argv[i].find('='));
    if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
    bool matches = false;
    for (const auto& name : known) matches = matches || name == word;
    if (matches) continue;
    if (const auto guess = core::did_you_mean(word, known)) {
      return "k3lab " + first + ": unknown option " + word + "; did you mean " + *guess + "? (`k3lab help " + first +
             "`)";
    }
  }
  return "";
}

}  // namespace k3lab::cli
