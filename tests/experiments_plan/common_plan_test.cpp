// Properties every planning module must have, checked for each of the seven protocols: the seed's
// unit count under the full profile, unique and deterministic unit ids, a smoke profile that changes
// sizes only, and broken copies rejected with the field named.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "plan_test_support.hpp"

namespace k3lab::experiments::plan_test {
namespace {

class PlanTest : public ::testing::TestWithParam<std::string> {
 protected:
  const Case& c() const { return case_for(GetParam()); }
};

TEST_P(PlanTest, FullProfileHasTheSeedsUnitCount) {
  const auto protocol = load(c());
  auto experiment = c().make();
  const auto units = experiment->enumerate(protocol, protocol.parameters_for("full"));
  EXPECT_EQ(units.size(), c().full_units);
}

TEST_P(PlanTest, ProtocolArmsAreExactlyTheSeedsArms) {
  const auto protocol = load(c());
  std::vector<std::string> ids;
  for (const auto& arm : protocol.arms) {
    ids.push_back(arm.id);
    EXPECT_TRUE(arm.requested_by_seed) << arm.id;
  }
  EXPECT_EQ(ids, c().arms);
  EXPECT_EQ(protocol.document.at("profiles").at("full"), nlohmann::json::object())
      << "the full profile must be the seed exactly";
}

TEST_P(PlanTest, UnitIdsAreUniqueAndEveryUnitNamesAnArm) {
  const auto protocol = load(c());
  auto experiment = c().make();
  for (const auto& profile : core::profile_names()) {
    const auto units = experiment->enumerate(protocol, protocol.parameters_for(profile));
    std::set<std::string> ids;
    for (const auto& u : units) {
      EXPECT_TRUE(ids.insert(u.id).second) << profile << ": duplicate unit id " << u.id;
      EXPECT_FALSE(u.id.empty());
    }
    const auto arms = unit_arms(units);
    const std::set<std::string> used(arms.begin(), arms.end());
    EXPECT_EQ(used, std::set<std::string>(c().arms.begin(), c().arms.end())) << profile;
  }
}

TEST_P(PlanTest, EnumerationIsDeterministic) {
  // Two module instances and two loads of the file: ids, order and specs must agree exactly.
  const auto first = c().make()->enumerate(load(c()), load(c()).parameters_for("full"));
  const auto second = c().make()->enumerate(load(c()), load(c()).parameters_for("full"));
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].id, second[i].id);
    EXPECT_EQ(first[i].spec, second[i].spec) << first[i].id;
  }
}

TEST_P(PlanTest, SmokeProfileChangesSizesOnly) {
  const auto protocol = load(c());
  const auto full = protocol.parameters_for("full");
  const auto smoke = protocol.parameters_for("smoke");
  for (const auto& pointer : c().logic) {
    const nlohmann::json::json_pointer p(pointer);
    ASSERT_TRUE(full.contains(p)) << pointer << " is not a parameter of " << c().id;
    EXPECT_EQ(full.at(p), smoke.at(p)) << "smoke changes " << pointer << ", which is logic, not a size";
  }
  // Everything smoke does change must be a number (a count, size or budget) or the data source.
  for (const auto& op : nlohmann::json::diff(full, smoke)) {
    const std::string path = op.at("path").get<std::string>();
    // The data source, and the downstream suite that goes with its tokenizer (docs/downstream.md); the
    // suite's metric is logic and stays.
    static const std::set<std::string> source = {"/data/dataset",     "/data/tokenizer",   "/downstream/suite",
                                                 "/downstream/file",  "/downstream/sha256", "/downstream/seed"};
    if (source.count(path)) continue;
    const nlohmann::json::json_pointer p(path);
    const auto& value = full.contains(p) ? full.at(p) : smoke.at(p);
    EXPECT_TRUE(value.is_number() || (value.is_array() && std::all_of(value.begin(), value.end(), [](const auto& v) {
                                        return v.is_number();
                                      })))
        << "smoke changes " << path << " to a non-size value";
  }
  auto experiment = c().make();
  const auto smoke_units = experiment->enumerate(protocol, smoke);
  EXPECT_GT(smoke_units.size(), 0u);
  EXPECT_LE(smoke_units.size(), c().full_units);
}

TEST_P(PlanTest, PlanDetailsCountTheEnumeratedUnits) {
  const auto protocol = load(c());
  auto experiment = c().make();
  const auto parameters = protocol.parameters_for("full");
  const auto units = experiment->enumerate(protocol, parameters);
  const auto details = experiment->plan_details(protocol, parameters, units);
  const std::string total_key = c().id == "context-probe" ? "/calls/total_before_transport_retries" : "/runs/total";
  EXPECT_EQ(details.at(nlohmann::json::json_pointer(total_key)).get<std::size_t>(), units.size());
}

TEST_P(PlanTest, UnknownParameterKeyIsRejectedWithItsPathAndASuggestion) {
  auto document = read_json(protocol_file(c().id));
  const std::string typo = c().count_field + "s";
  document["parameters"][typo] = 1;
  const auto issues = load_issues(c(), document);
  const auto hit = std::find_if(issues.begin(), issues.end(), [&](const core::SchemaIssue& i) {
    return i.path == "profiles.full -> parameters." + typo;
  });
  ASSERT_NE(hit, issues.end()) << "no issue names parameters." << typo;
  EXPECT_NE(hit->message.find("unknown key"), std::string::npos) << hit->message;
  EXPECT_NE(hit->message.find("did you mean \"" + c().count_field + "\""), std::string::npos) << hit->message;
}

TEST_P(PlanTest, WrongTypeIsRejectedWithItsPath) {
  auto document = read_json(protocol_file(c().id));
  document["parameters"][c().count_field] = "three";
  const auto issues = load_issues(c(), document);
  const auto hit = std::find_if(issues.begin(), issues.end(), [&](const core::SchemaIssue& i) {
    return i.path == "profiles.full -> parameters." + c().count_field;
  });
  ASSERT_NE(hit, issues.end());
  EXPECT_NE(hit->message.find("expected an integer"), std::string::npos) << hit->message;
}

TEST_P(PlanTest, NegativeCountIsRejectedWithItsPath) {
  auto document = read_json(protocol_file(c().id));
  document["parameters"][c().count_field] = -3;
  const auto issues = load_issues(c(), document);
  const auto hit = std::find_if(issues.begin(), issues.end(), [&](const core::SchemaIssue& i) {
    return i.path == "profiles.full -> parameters." + c().count_field;
  });
  ASSERT_NE(hit, issues.end());
  EXPECT_NE(hit->message.find("expected a value >="), std::string::npos) << hit->message;
}

TEST_P(PlanTest, BrokenSmokeOverrideIsRejectedUnderItsProfile) {
  auto document = read_json(protocol_file(c().id));
  document["profiles"]["smoke"][c().count_field] = -1;
  const auto issues = load_issues(c(), document);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "profiles.smoke -> parameters." + c().count_field);
}

TEST_P(PlanTest, MissingArmIsRejectedAtEnumeration) {
  auto protocol = load(c());
  protocol.arms.pop_back();
  auto experiment = c().make();
  try {
    experiment->enumerate(protocol, protocol.parameters_for("full"));
    ADD_FAILURE() << "enumerate accepted a protocol without arm " << c().arms.back();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("arms must be exactly"), std::string::npos) << e.what();
  }
}

TEST_P(PlanTest, SummaryCountsTerminalRecordsByArm) {
  const auto protocol = load(c());
  auto experiment = c().make();
  const auto parameters = protocol.parameters_for("smoke");
  const auto units = experiment->enumerate(protocol, parameters);
  RunRecords records;
  records.manifest = {{"profile", "smoke"}, {"parameters", parameters}};
  // One result, one invalid and one failure, for the first three units of the plan.
  const std::vector<std::string> kinds = {"result", "invalid", "failure"};
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    records.ledger.records.push_back({{"seq", i}, {"kind", kinds[i]}, {"unit", units[i].id}, {"spec", units[i].spec}});
  }
  report::Page page;
  experiment->summarise(protocol, records, page);
  // The record-count table (its id starts with terminal-records) stays when a runner adds result tables.
  const report::Table* table = nullptr;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table && block.table.id.rfind("terminal-records", 0) == 0) {
      table = &block.table;
      break;
    }
  }
  ASSERT_NE(table, nullptr) << "no terminal-records table on the " << c().id << " page";
  std::int64_t planned = 0, result = 0, invalid = 0, failure = 0, open = 0;
  auto number = [](const report::Cell& cell) { return std::get<std::int64_t>(cell.value); };
  for (const auto& row : table->rows) {
    planned += number(row[1]);
    result += number(row[2]);
    invalid += number(row[3]);
    failure += number(row[4]);
    open += number(row[5]);
  }
  EXPECT_EQ(planned, static_cast<std::int64_t>(units.size()));
  EXPECT_EQ(result, 1);
  EXPECT_EQ(invalid, 1);
  EXPECT_EQ(failure, 1);
  EXPECT_EQ(open, static_cast<std::int64_t>(units.size()) - 3);
}

std::vector<std::string> ids() {
  std::vector<std::string> out;
  for (const auto& c : cases()) out.push_back(c.id);
  return out;
}

INSTANTIATE_TEST_SUITE_P(SevenProtocols, PlanTest, ::testing::ValuesIn(ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace k3lab::experiments::plan_test
