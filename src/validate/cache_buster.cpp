#include "k3lab/validate/cache_buster.hpp"

#include <stdexcept>

#include "k3lab/core/sha256.hpp"

namespace k3lab::validate {

std::string cache_buster_line(std::string_view prefix_id) {
  if (prefix_id.empty()) {
    throw std::invalid_argument("cache_buster_line: the prefix id is empty; give every scored cell a "
                                "retained prefix id (a cold repetition needs one never used elsewhere)");
  }
  const std::string label = core::sha256_hex(prefix_id).substr(0, 16);
  return "Request label " + label +
         ": a neutral tag for this request; it carries no information about the task.";
}

}  // namespace k3lab::validate
