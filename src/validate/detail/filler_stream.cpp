#include "detail/filler_stream.hpp"

#include <stdexcept>

#include "detail/code_generator.hpp"
#include "detail/prose_generator.hpp"
#include "detail/text.hpp"

namespace k3lab::validate::detail {
namespace {

// Cut points after every word of `text` starting at `from`.
void add_word_cuts(const std::string& text, std::size_t from, std::vector<std::size_t>& cuts) {
  for (std::size_t i = from; i < text.size(); ++i) {
    const bool word_end = !is_space(text[i]) && (i + 1 == text.size() || is_space(text[i + 1]));
    if (word_end) cuts.push_back(i + 1);
  }
}

class ProseFiller final : public FillerStream {
 public:
  explicit ProseFiller(std::uint64_t seed) : prose_(core::stream_seed(seed, {1})), tail_seed_(core::stream_seed(seed, {2})) {}

  FillerPiece next() override {
    FillerPiece piece;
    const int sentences = 4 + static_cast<int>(prose_.rng().below(6));
    prose_.append_paragraph(piece.body, sentences);
    return piece;
  }

  TailCandidate tail(std::size_t min_bytes) const override {
    ProseGenerator prose(tail_seed_);
    TailCandidate candidate;
    while (candidate.text.size() < min_bytes) {
      if (!candidate.text.empty()) candidate.text += ' ';
      prose.append_sentence(candidate.text);
    }
    add_word_cuts(candidate.text, 0, candidate.cuts);
    return candidate;
  }

  bool is_code() const override { return false; }

 private:
  ProseGenerator prose_;
  std::uint64_t tail_seed_;
};

class CodeFiller final : public FillerStream {
 public:
  CodeFiller(std::uint64_t seed, const std::set<std::string>& reserved)
      : code_(core::stream_seed(seed, {3})), tail_seed_(core::stream_seed(seed, {4})) {
    for (const auto& path : reserved) code_.reserve_path(path);
    core::Rng rng(tail_seed_);
    tail_path_ = "src/notes/";
    tail_path_ += pick(rng, prose_adjectives());
    tail_path_ += "_notes.py";
  }

  FillerPiece next() override {
    SourceFile file = code_.next_file();
    return FillerPiece{file_section_body(file.path, file.content)};
  }

  TailCandidate tail(std::size_t min_bytes) const override {
    ProseGenerator prose(tail_seed_);
    TailCandidate candidate;
    candidate.code = true;
    candidate.text = "FILE: " + tail_path_ + "\n# Notes kept with the repository.";
    const std::size_t first_cut = candidate.text.size();
    candidate.cuts.push_back(first_cut);
    std::size_t line_length = 0;
    std::string sentence;
    while (candidate.text.size() < min_bytes) {
      sentence.clear();
      prose.append_sentence(sentence);
      for (std::string_view word : split_words(sentence)) {
        if (line_length == 0 || line_length + word.size() > 88) {
          candidate.text += "\n#";
          line_length = 1;
        }
        candidate.text += ' ';
        candidate.text += word;
        line_length += word.size() + 1;
      }
    }
    add_word_cuts(candidate.text, first_cut, candidate.cuts);
    return candidate;
  }

  bool is_code() const override { return true; }

 private:
  static std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && is_space(text[i])) ++i;
      std::size_t j = i;
      while (j < text.size() && !is_space(text[j])) ++j;
      if (j > i) words.push_back(text.substr(i, j - i));
      i = j;
    }
    return words;
  }

  CodeGenerator code_;
  std::uint64_t tail_seed_;
  std::string tail_path_;
};

class PinnedCodeFiller final : public FillerStream {
 public:
  PinnedCodeFiller(std::shared_ptr<const RepositorySnapshot> snapshot, const std::set<std::string>& reserved)
      : snapshot_(std::move(snapshot)), reserved_(reserved) {}

  FillerPiece next() override {
    while (index_ < snapshot_->files.size()) {
      const SnapshotFile& file = snapshot_->files[index_++];
      if (reserved_.count(file.path) != 0) continue;
      last_ = &file;
      return FillerPiece{file_section_body(file.path, file.content)};
    }
    throw std::invalid_argument("repository family: the pinned repository's " + std::to_string(snapshot_->files.size()) +
                                " files are used up before the context budget is filled; use a smaller length");
  }

  // The file next() returned last (the one that did not fit whole), cut after each line.
  TailCandidate tail(std::size_t) const override {
    TailCandidate candidate;
    candidate.code = true;
    candidate.complete = true;
    if (last_ == nullptr) return candidate;
    candidate.text = file_section_body(last_->path, last_->content);
    candidate.text.pop_back();  // body() puts the newline after each cut back
    for (std::size_t i = candidate.text.find('\n'); i != std::string::npos; i = candidate.text.find('\n', i + 1))
      candidate.cuts.push_back(i);
    candidate.cuts.push_back(candidate.text.size());
    return candidate;
  }

  bool is_code() const override { return true; }

 private:
  std::shared_ptr<const RepositorySnapshot> snapshot_;
  std::set<std::string> reserved_;
  std::size_t index_ = 0;
  const SnapshotFile* last_ = nullptr;
};

}  // namespace

std::string TailCandidate::body(std::size_t units) const {
  std::string out = text.substr(0, cuts[units - 1]);
  if (code) {
    out += '\n';
  } else if (out.back() != '.') {
    out += '.';
  }
  return out;
}

std::unique_ptr<FillerStream> make_prose_filler(std::uint64_t seed) { return std::make_unique<ProseFiller>(seed); }

std::unique_ptr<FillerStream> make_code_filler(std::uint64_t seed, const std::set<std::string>& reserved_paths) {
  return std::make_unique<CodeFiller>(seed, reserved_paths);
}

std::unique_ptr<FillerStream> make_pinned_code_filler(std::shared_ptr<const RepositorySnapshot> snapshot,
                                                      const std::set<std::string>& reserved_paths) {
  return std::make_unique<PinnedCodeFiller>(std::move(snapshot), reserved_paths);
}

}  // namespace k3lab::validate::detail
