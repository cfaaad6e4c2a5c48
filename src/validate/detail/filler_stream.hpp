#pragma once
// Filler sections for the context-probe document: neutral prose, or synthetic code files for the
// repository family, or the files of a pinned real repository in its pinned order.
//
// A stream is deterministic: the same seed yields the same sequence of section bodies, so a fixture
// at 32K tokens uses a prefix of the filler of the same fixture at 1M tokens (up to the placement of
// the evidence sections). The tail candidate is a separate deterministic text with word-level cut
// points: the assembler trims it to land on the token target from below.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "k3lab/validate/repo_snapshot.hpp"

namespace k3lab::validate::detail {

struct FillerPiece {
  std::string body;  // section body without the evidence id prefix
};

struct TailCandidate {
  std::string text;
  std::vector<std::size_t> cuts;  // cut positions after each word, ascending
  bool code = false;              // code: each cut is followed by "\n"; prose: by '.' unless present
  bool complete = false;          // the text cannot grow (a whole file): a larger request gets the same

  // The body made of the first `units` words (1 <= units <= cuts.size()).
  std::string body(std::size_t units) const;
};

class FillerStream {
 public:
  virtual ~FillerStream() = default;
  virtual FillerPiece next() = 0;
  // A candidate with at least `min_bytes` bytes unless it is complete; a larger request extends the same
  // text.
  virtual TailCandidate tail(std::size_t min_bytes) const = 0;
  virtual bool is_code() const = 0;
};

std::unique_ptr<FillerStream> make_prose_filler(std::uint64_t seed);
// `reserved_paths`: paths of the traced files, never produced by the stream.
std::unique_ptr<FillerStream> make_code_filler(std::uint64_t seed, const std::set<std::string>& reserved_paths);
// The snapshot's files in their pinned order, skipping `reserved_paths` (the evidence files); the tail is
// the file that did not fit whole, cut at line ends. next() throws std::invalid_argument when the files
// run out before the budget is filled.
std::unique_ptr<FillerStream> make_pinned_code_filler(std::shared_ptr<const RepositorySnapshot> snapshot,
                                                      const std::set<std::string>& reserved_paths);

}  // namespace k3lab::validate::detail
