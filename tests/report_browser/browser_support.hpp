#pragma once
// What the browser test of the HTML report needs: headless Chromium (Debian's `chromium`) run on
// files from disk, and checks that need no browser (link targets, PNG size and header).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/k3lab_process.hpp"

namespace k3lab::testing {

// $K3LAB_CHROMIUM when set, else `chromium` or `chromium-browser` from PATH; nothing when none exists.
std::optional<std::filesystem::path> find_chromium();

// file:///absolute/path, percent-encoded.
std::string file_url(const std::filesystem::path& file);

// Runs headless Chromium with a private profile under `profile_dir`, the given extra arguments and
// `url`; console messages of the pages go to stderr (--enable-logging=stderr). Killed after 90 s
// (the result then has a signal).
ProcessResult run_headless(const std::filesystem::path& chromium, const std::filesystem::path& profile_dir,
                           const std::vector<std::string>& arguments, const std::string& url);

// The lines of Chromium's stderr that report a page's console message (":CONSOLE"): script errors,
// failed loads that the browser reports to the console.
std::vector<std::string> console_lines(const std::string& stderr_text);

// The values of every href="..." and src="..." attribute in `html`, as written (entities decoded).
std::vector<std::string> link_targets(const std::string& html);

// For each target in the HTML file that is not a fragment ("#x") and has no scheme: a line naming it
// when the file it points to (relative to the page, percent-decoded, fragment dropped) does not exist.
// Targets with a scheme (http:, file:, data:, javascript:) are reported too: a report page loads
// nothing from elsewhere.
std::vector<std::string> broken_targets(const std::filesystem::path& html_file);

struct PngSize {
  unsigned width = 0;
  unsigned height = 0;
};
// The image size from a PNG file's header; nothing when the file is not a PNG.
std::optional<PngSize> png_size(const std::filesystem::path& file);

}  // namespace k3lab::testing
