#pragma once
// The cold-prefix cache buster: a fresh, semantically neutral first line derived from a prefix id.
// A cold repetition uses a prefix id never used elsewhere, so its first line (and therefore every
// byte after it, for prefix caching) differs from every other request. The line has a fixed byte
// length, so with the default byte estimator the rest of the fixture is identical for every prefix id.
#include <string>
#include <string_view>

namespace k3lab::validate {

// "Request label <16 hex digits of SHA-256(prefix_id)>: a neutral tag for this request; it carries no
// information about the task." Throws std::invalid_argument for an empty prefix id.
std::string cache_buster_line(std::string_view prefix_id);

}  // namespace k3lab::validate
