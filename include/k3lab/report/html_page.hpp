#pragma once
// A report page as one self-contained HTML document, rendered from the same Page data as index.md
// (never converted from the Markdown): title, smoke banner, experiment, profile, evidence class,
// protocol (frozen or not), warnings, status, run, can say / cannot say, then the page's blocks in
// order (text, tables with their captions and data files, charts as <img> of charts/<id>.svg), the
// failure log, excluded data and provenance. Inline style only: no scripts, fonts or network, readable
// when opened from disk and printable. Deterministic bytes for the same page.
#include <string>

#include "k3lab/report/page.hpp"

namespace k3lab::report {

// The page's index.html. Links: charts/, tables/ (inside the page folder) and ../index.html (the
// report's index, one level up).
std::string page_html(const Page& page);

// A page that shows `text` as written (preformatted), for notes that are not report pages, such as
// the note on a run dir that could not be rendered. `index_link`: the report's index.html relative to
// the note's folder.
std::string note_html(const std::string& title, const std::string& text, const std::string& index_link);

}  // namespace k3lab::report
