#pragma once
// How a table reads to a person, shared by the Markdown and HTML renderers so both show the same
// cells: validation, each cell's reading text and which columns are right-aligned as numbers.
#include <cstddef>
#include <string>

#include "k3lab/report/page.hpp"

namespace k3lab::report::detail {

// Throws std::invalid_argument unless the table has columns, unique column names and one cell per
// column in every row.
void check_table(const Table& table);

// The cell as a reader sees it: counts grouped by thousands, no exponents for large values, "–" for a
// missing value. CSV and JSON keep the raw value for tools.
std::string reading_text(const Cell& cell);

// True when column `column` holds only numbers (and at least one); such columns are right-aligned.
bool numeric_column(const Table& table, std::size_t column);

}  // namespace k3lab::report::detail
