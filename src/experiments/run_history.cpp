#include "k3lab/experiments/run_history.hpp"

#include <utility>

namespace k3lab::experiments {
namespace {

// The run dir's own name (page.run_dir is "<id>/<name>" relative to the runs root).
std::string run_name(const report::Page& page) { return std::filesystem::path(page.run_dir).filename().string(); }

// The link from the page of run `from` to the page of run `to`.
std::string link_between(const std::vector<RunPage>& runs, std::size_t headline, std::size_t from, std::size_t to) {
  const std::string up = from == headline ? "" : "../../";
  const std::string down = to == headline ? "" : other_run_folder(runs[to].page).string() + "/";
  return up + down + "index.md";
}

std::string run_line(const std::vector<RunPage>& runs, std::size_t headline, std::size_t from, std::size_t r) {
  const RunPage& run = runs[r];
  std::string role = r == headline ? "headline" : (r < headline ? "earlier run" : "later run, not complete");
  if (r == from) role += ", this page";
  std::string line = "- `" + run.page.run_dir + "` (" + role + "): " + run.page.status;
  if (!run.window_rule.empty()) line += "; window rule: " + run.window_rule;
  line += "; failures: " + std::to_string(run.failures);
  if (r != from) line += " · [page](" + link_between(runs, headline, from, r) + ")";
  return line;
}

report::Block markdown_block(std::string text) {
  report::Block block;
  block.kind = report::Block::Kind::Markdown;
  block.markdown = std::move(text);
  return block;
}

}  // namespace

std::size_t headline_run(const std::vector<RunPage>& runs) {
  for (std::size_t r = runs.size(); r-- > 0;) {
    if (runs[r].complete) return r;
  }
  return runs.empty() ? 0 : runs.size() - 1;
}

std::filesystem::path other_run_folder(const report::Page& page) { return std::filesystem::path("runs") / run_name(page); }

void link_run_history(std::vector<RunPage>& runs, std::size_t headline) {
  const std::string experiment = runs.empty() ? std::string() : runs[headline].page.experiment_id;
  const std::string profile = runs.empty() ? std::string() : runs[headline].page.profile;
  for (std::size_t from = 0; from < runs.size(); ++from) {
    report::Page& page = runs[from].page;
    if (runs.size() == 1) {
      page.runs = {markdown_block("This is the only run of " + experiment + " at the " + profile +
                                  " profile under the runs folder.")};
      continue;
    }
    std::string list = std::to_string(runs.size()) + " runs of " + experiment + " at the " + profile +
                       " profile, oldest first; the headline is the latest complete run (or the latest run when "
                       "none is complete). None is dropped.\n\n";
    for (std::size_t r = 0; r < runs.size(); ++r) list += run_line(runs, headline, from, r) + "\n";
    page.runs = {markdown_block(list)};
    if (from == headline) {
      page.run_note = "Headline run: " + std::to_string(runs.size() - 1) + " other run(s) of this experiment and "
                      "profile are listed under Runs, each with its own page.";
    } else {
      page.report_root = "../../..";
      page.run_note = std::string("**NOT THE HEADLINE RUN:** ") +
                      (from < headline ? "an earlier run" : "a later run that is not complete") +
                      "; the headline is [`" + runs[headline].page.run_dir + "`](" +
                      link_between(runs, headline, from, headline) + ").";
    }
  }
}

}  // namespace k3lab::experiments
