#include "failure_rule_cases.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::failure_rule_cases {
namespace {

std::filesystem::path fixture_run(const std::string& id) {
  return std::filesystem::path(K3LAB_SOURCE_DIR) / "fixtures/reports" / id / "run";
}

// The committed smoke run, relabelled as a full-profile run so that the decision rule is read.
RunRecords fixture_records(const std::string& id, const std::string& profile = "full") {
  RunRecords records{core::read_manifest(fixture_run(id)), core::read_ledger(fixture_run(id)), fixture_run(id)};
  records.manifest["profile"] = profile;
  return records;
}

bool of_unit(const nlohmann::json& record, const std::string& arm, std::uint64_t seed) {
  const auto spec = record.value("spec", nlohmann::json::object());
  return core::is_terminal_kind(record.value("kind", "")) && spec.value("arm", "") == arm &&
         spec.value("seed", std::uint64_t{0}) == seed && spec.value("phase", "confirmatory") == "confirmatory";
}

// The terminal record of (arm, seed) becomes a failure of class `reason`.
void fail(RunRecords& records, const std::string& arm, std::uint64_t seed, const std::string& reason) {
  int changed = 0;
  auto edited = records.ledger.records.to_vector();  // the ledger holds text; edit parsed copies
  for (auto& r : edited) {
    if (!of_unit(r, arm, seed)) continue;
    r = {{"kind", "failure"},
         {"unit", r.at("unit")},
         {"spec", r.at("spec")},
         {"reason", reason},
         {"detail", reason + " injected by the test"},
         {"data", {{"arm", arm}, {"seed", seed}}}};
    ++changed;
  }
  records.ledger.records = core::LedgerRecords(edited);
  ASSERT_EQ(changed, 1) << arm << " seed " << seed;
}

// The unit of (arm, seed) has no terminal record: it is still open.
void reopen(RunRecords& records, const std::string& arm, std::uint64_t seed) {
  const auto before = records.ledger.records.size();
  auto kept = records.ledger.records.to_vector();
  std::erase_if(kept, [&](const nlohmann::json& r) { return of_unit(r, arm, seed); });
  records.ledger.records = core::LedgerRecords(kept);
  ASSERT_EQ(records.ledger.records.size(), before - 1);
}

report::Page summarise(const Case& c, const RunRecords& records) {
  const auto protocol =
      core::protocol_from_document(records.manifest.at("protocol"), fixture_run(c.id) / "manifest.json");
  report::Page page;
  c.experiment.summarise(protocol, records, page);
  return page;
}

const report::Table* table(const report::Page& page, const std::string& id) {
  for (const auto& b : page.blocks) {
    if (b.kind == report::Block::Kind::Table && b.table.id == id) return &b.table;
  }
  return nullptr;
}

std::string text_of(const report::Cell& cell) {
  return std::holds_alternative<std::string>(cell.value) ? std::get<std::string>(cell.value) : std::string();
}

// Each verdict row's verdict: the first non-empty cell after the one that starts with "verdict".
std::vector<std::string> verdicts(const report::Page& page) {
  std::vector<std::string> out;
  const auto* decision = table(page, "decision");
  if (!decision) return out;
  for (const auto& row : decision->rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (text_of(row[i]).rfind("verdict", 0) != 0) continue;
      for (std::size_t j = i + 1; j < row.size(); ++j) {
        if (!text_of(row[j]).empty()) {
          out.push_back(text_of(row[j]));
          break;
        }
      }
      break;
    }
  }
  return out;
}

// Every word the page shows in its results: Markdown, titles, captions and cells.
std::string page_text(const report::Page& page) {
  std::string all;
  for (const auto& b : page.blocks) {
    all += b.markdown + "\n" + b.table.title + "\n" + b.table.caption + "\n" + b.chart.title + "\n" + b.chart.caption +
           "\n";
    for (const auto& row : b.table.rows) {
      for (const auto& cell : row) all += text_of(cell) + "\n";
    }
  }
  return all;
}

}  // namespace

// Baseline: the unchanged run reads its decision, with a verdict and no seed lost.
void unchanged_run_reads_its_decision(const Case& c) {
  const auto page = summarise(c, fixture_records(c.id));
  const auto v = verdicts(page);
  ASSERT_FALSE(v.empty());
  for (const auto& verdict : v) EXPECT_EQ(verdict.find("failed on"), std::string::npos) << verdict;
}

// A NaN seed in the treatment arm must not yield a claim for the treatment.
void treatment_nan_is_no_claim(const Case& c) {
  auto records = fixture_records(c.id);
  fail(records, c.treatment, c.seed, "nan-loss");
  const auto page = summarise(c, records);
  bool found = false;
  for (const auto& verdict : verdicts(page)) {
    if (verdict.find(c.treatment + " failed on seed " + std::to_string(c.seed)) == std::string::npos) continue;
    found = true;
    EXPECT_EQ(verdict.rfind(c.refused + ": ", 0), 0u) << verdict;
  }
  EXPECT_TRUE(found) << "no verdict counts the failed seed against " << c.treatment;
}

// A control failure counts against the control: the treatment's verdict is not refused for it.
void control_failure_counts_against_the_control(const Case& c) {
  auto records = fixture_records(c.id);
  fail(records, c.control, c.seed, "oom");
  const auto page = summarise(c, records);
  const auto v = verdicts(page);
  ASSERT_FALSE(v.empty());
  bool named = false;
  for (const auto& verdict : v) {
    EXPECT_NE(verdict.rfind(c.refused + ": ", 0), 0u) << verdict;
    named = named ||
            (verdict.find("failed on seed " + std::to_string(c.seed) + " (lost by the control)") != std::string::npos);
  }
  EXPECT_TRUE(named);
}

// An incomplete set: no decision, and every table and chart after the records table says "partial".
void incomplete_set_has_no_verdict_and_partial_labels(const Case& c) {
  auto records = fixture_records(c.id);
  reopen(records, c.treatment, c.seed);
  const std::size_t planned = records.manifest.at("units_planned").get<std::size_t>();
  const auto page = summarise(c, records);
  EXPECT_EQ(table(page, "decision"), nullptr);
  EXPECT_NE(page_text(page).find("Decision rule: not evaluated"), std::string::npos);
  const std::string label = "(partial: " + std::to_string(planned - 1) + " of " + std::to_string(planned) + " runs)";
  std::size_t labelled = 0;
  bool after_records = false;
  for (const auto& b : page.blocks) {
    if (b.kind == report::Block::Kind::Markdown) continue;
    const auto& title = b.kind == report::Block::Kind::Table ? b.table.title : b.chart.title;
    if (!after_records) {
      after_records = b.kind == report::Block::Kind::Table && b.table.id.rfind("terminal-records-by", 0) == 0;
      continue;
    }
    EXPECT_NE(title.find(label), std::string::npos) << title;
    ++labelled;
  }
  EXPECT_GT(labelled, 0u);
}

// The same failure in every arm of a seed is shared infrastructure: excluded, with its reason.
void identical_failure_in_every_arm_is_excluded(const Case& c) {
  auto records = fixture_records(c.id);
  for (const auto& arm : c.arms) fail(records, arm, c.seed, "oom");
  const auto page = summarise(c, records);
  const auto* excluded = table(page, "excluded-seeds");
  ASSERT_NE(excluded, nullptr);
  ASSERT_EQ(excluded->rows.size(), 1u);
  EXPECT_EQ(text_of(excluded->rows[0][0]), std::to_string(c.seed));
  EXPECT_NE(text_of(excluded->rows[0][1]).find("oom"), std::string::npos);
  EXPECT_NE(text_of(excluded->rows[0][1]).find("every arm"), std::string::npos);
  for (const auto& verdict : verdicts(page)) EXPECT_EQ(verdict.find("failed on"), std::string::npos) << verdict;
}

// A smoke page: no decision, no verdict wording, and a can-say line from the run's own sizes.
void smoke_page_states_its_real_sizes_without_a_verdict(const Case& c) {
  const auto records = fixture_records(c.id, "smoke");
  const auto page = summarise(c, records);
  EXPECT_EQ(table(page, "decision"), nullptr);
  const std::regex verdict_words(R"(supported|\bwin\b|GAIN CLAIMED|REJECTED|not evaluable)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(page_text(page), verdict_words));
  ASSERT_EQ(page.can_say.size(), 1u);
  EXPECT_NE(page.can_say[0].find("toy sizes"), std::string::npos);
  EXPECT_NE(page.can_say[0].find(std::to_string(c.seed)), std::string::npos) << page.can_say[0];
  EXPECT_NE(page.can_say[0].find(std::to_string(records.manifest.at("units_planned").get<std::size_t>()) + " runs"),
            std::string::npos)
      << page.can_say[0];
}

}  // namespace k3lab::experiments::failure_rule_cases
