#pragma once
// What the Markdown and HTML renderings of a page share, so both state the same facts from the same
// data: the shown title, the protocol statement, the log summaries and the log and provenance tables.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/report/page.hpp"

namespace k3lab::report::detail {

// Recorded text (model output, error messages) may hold invalid UTF-8: replaced rather than thrown on.
std::string dump_json(const nlohmann::json& value, int indent);

// The page's title, or its experiment id when it has none.
std::string page_title(const Page& page);

// What the page says about its protocol: the freeze detail of a frozen run, or for any other run the
// reason it is not frozen, without a leading "NOT FROZEN" (the renderers say that once, loudly).
std::string protocol_statement(const Page& page);

// "3 entries; by reason: a (1), b (2)." for a non-empty log.
std::string log_summary(const std::vector<LogEntry>& entries);

// The log as a table (Unit, Kind, Reason, Detail), one row per entry.
Table log_table(const std::string& id, const std::vector<LogEntry>& entries);

// False for a page rendered without a manifest (null or empty provenance).
bool has_provenance(const nlohmann::json& provenance);

// Every leaf of the provenance as a Key/Value row, keys dotted ("host.cpu").
Table provenance_table(const nlohmann::json& provenance);

}  // namespace k3lab::report::detail
