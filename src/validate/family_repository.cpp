// Family 5, repository task: a pseudo-repository in which the value of a constant must be traced
// through imports across three files; decoy files define the same names on other import paths.
#include <array>

#include "detail/code_generator.hpp"
#include "detail/family_content.hpp"
#include "detail/prose_generator.hpp"
#include "detail/text.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate::detail {
namespace {

const std::vector<std::string_view> kRoots = {"quota",    "budget",    "margin",  "reserve",  "capacity",
                                              "threshold", "backlog",  "allowance", "headroom", "cadence"};
const std::vector<std::string_view> kBaseModules = {"limits", "defaults", "constants", "baseline"};
const std::vector<std::string_view> kDerivedModules = {"scaling", "derive", "tuning", "policy"};
const std::vector<std::string_view> kSettingsModules = {"settings", "config_values", "runtime", "profile"};
const std::vector<std::string_view> kTargetPrefixes = {"RETRY", "MAX", "TOTAL", "EFFECTIVE"};

constexpr std::array<std::array<int, 3>, 6> kFileSlots = {
    {{2, 0, 1}, {0, 1, 2}, {1, 2, 0}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}}};

std::string package_name(core::Rng& rng, const std::string& avoid) {
  for (;;) {
    std::string name = to_lower(invent_name(rng, 2, 2).text());
    if (!is_filler_package_name(name) && name != avoid) return name;
  }
}

long long draw_between(core::Rng& rng, long long low, long long high) {
  return low + static_cast<long long>(rng.below(static_cast<std::uint64_t>(high - low + 1)));
}

std::string docstring(ProseGenerator& prose) { return "\"\"\"" + prose.sentence() + "\"\"\"\n"; }

}  // namespace

FamilyContent build_repository(core::Rng& rng, int index) {
  ProseGenerator prose(rng.next_u64());
  const std::string package = package_name(rng, "");
  const std::string other_package = package_name(rng, package);
  const std::string root(pick(rng, kRoots));
  const std::string base_module(pick(rng, kBaseModules));
  const std::string derived_module(pick(rng, kDerivedModules));
  const std::string settings_module(pick(rng, kSettingsModules));
  const std::string target = std::string(pick(rng, kTargetPrefixes)) + "_" + to_upper(root);
  const std::string base_name = "BASE_" + to_upper(root);
  const std::string function = "compute_" + root;
  const long long base = draw_between(rng, 11, 97);
  const long long factor = draw_between(rng, 2, 9);
  const long long offset = draw_between(rng, 1, 40);
  long long decoy_base = draw_between(rng, 11, 97);
  while (decoy_base == base) decoy_base = draw_between(rng, 11, 97);
  long long decoy_factor = draw_between(rng, 2, 9);
  while (decoy_factor == factor) decoy_factor = draw_between(rng, 2, 9);
  const long long answer = base * factor + offset;

  const std::string base_path = "src/" + package + "/" + base_module + ".py";
  const std::string derived_path = "src/" + package + "/" + derived_module + ".py";
  const std::string settings_path = "src/" + package + "/" + settings_module + ".py";
  const std::string decoy_base_path = "src/" + package + "/legacy/" + base_module + ".py";
  const std::string decoy_derived_path = "src/" + other_package + "/" + derived_module + ".py";

  // Docstrings are drawn one statement at a time: the operands of one '+' chain are evaluated in an
  // unspecified order, which would make the text compiler-dependent.
  const std::string settings_doc = docstring(prose);
  const std::string derived_doc = docstring(prose);
  const std::string function_doc = docstring(prose);
  const std::string base_doc = docstring(prose);
  const std::string decoy_base_doc = docstring(prose);
  const std::string decoy_derived_doc = docstring(prose);
  const std::string settings_file = settings_doc + "\nfrom " + package + "." + derived_module + " import " + function +
                                    "\n\n" + target + " = " + function + "() + " + std::to_string(offset) + "\n";
  const std::string derived_file = derived_doc + "\nfrom " + package + "." + base_module + " import " + base_name +
                                   "\n\n\ndef " + function + "():\n    " + function_doc + "    return " + base_name +
                                   " * " + std::to_string(factor) + "\n";
  const std::string base_file = base_doc + "\n" + base_name + " = " + std::to_string(base) + "\n";
  const std::string decoy_base_file = decoy_base_doc + "\n" + base_name + " = " + std::to_string(decoy_base) + "\n";
  const std::string decoy_derived_file = decoy_derived_doc + "\nfrom " + package + ".legacy." + base_module +
                                         " import " + base_name + "\n\n\ndef " + function + "():\n    return " +
                                         base_name + " * " + std::to_string(decoy_factor) + "\n";

  const std::vector<double> slots = required_depths(FixtureFamily::repository, index, 3);
  const auto& slot = kFileSlots[static_cast<std::size_t>(index) % kFileSlots.size()];
  const std::vector<double> decoy_depths = distractor_depths(FixtureFamily::repository, 2);

  FamilyContent content;
  content.code_filler = true;
  content.evidence.push_back({file_section_body(settings_path, settings_file), true, slots[slot[0]],
                              "file defining " + target});
  content.evidence.push_back({file_section_body(derived_path, derived_file), true, slots[slot[1]],
                              "file defining " + function});
  content.evidence.push_back({file_section_body(base_path, base_file), true, slots[slot[2]],
                              "file defining " + base_name});
  content.evidence.push_back({file_section_body(decoy_base_path, decoy_base_file), false, decoy_depths[0],
                              "decoy: same constant, other module"});
  content.evidence.push_back({file_section_body(decoy_derived_path, decoy_derived_file), false, decoy_depths[1],
                              "decoy: same function, other package"});
  content.reserved_paths = {settings_path, derived_path, base_path, decoy_base_path, decoy_derived_path};
  content.question = "In this repository snapshot, what integer value does the constant " + target + " defined in " +
                     settings_path + " evaluate to? Give the integer only.";
  content.expected_answer = std::to_string(answer);
  content.derivation =
      "Section " + evidence_ref(0) + " (" + settings_path + ") sets " + target + " = " + function + "() + " +
      std::to_string(offset) + " and imports " + function + " from " + package + "." + derived_module + "; " +
      evidence_ref(1) + " (" + derived_path + ") defines " + function + "() as " + base_name + " * " +
      std::to_string(factor) + " and imports " + base_name + " from " + package + "." + base_module + "; " +
      evidence_ref(2) + " (" + base_path + ") sets " + base_name + " = " + std::to_string(base) + ". So " + target +
      " = " + std::to_string(base) + " * " + std::to_string(factor) + " + " + std::to_string(offset) + " = " +
      std::to_string(answer) + ". The decoys " + evidence_ref(3) + " (" + decoy_base_path + ", " + base_name + " = " +
      std::to_string(decoy_base) + ") and " + evidence_ref(4) + " (" + decoy_derived_path + ", factor " +
      std::to_string(decoy_factor) + ") are not on the import path.";
  content.details = {{"target", target},
                     {"files", {settings_path, derived_path, base_path}},
                     {"decoys", {decoy_base_path, decoy_derived_path}},
                     {"base", base},
                     {"factor", factor},
                     {"offset", offset},
                     {"answer_if_decoy_base_used", decoy_base * factor + offset}};
  return content;
}

}  // namespace k3lab::validate::detail
