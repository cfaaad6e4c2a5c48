#pragma once
// Ledger records held as their JSON text, parsed one at a time when read. A DOM of every record costs
// five to six bytes of RAM per ledger byte (nlohmann's maps and heap strings); the text costs one, so a
// reader that walks the records (report, resume, status) needs about as much memory as the file.
//
// Reading is by value: `for (const auto& r : records)` parses each record as the loop reaches it and
// drops it after. Copies and subsets share the text (copy on append), so taking the terminal records of
// a run costs an index, not a second copy of the ledger.
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::core {

class LedgerRecords {
 public:
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = nlohmann::json;
    using difference_type = std::ptrdiff_t;
    using reference = nlohmann::json;  // parsed on each dereference
    using pointer = void;

    const_iterator() = default;
    const_iterator(const LedgerRecords* records, std::size_t index) : records_(records), index_(index) {}
    nlohmann::json operator*() const { return (*records_)[index_]; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const const_iterator& other) const { return index_ == other.index_; }
    std::size_t index() const { return index_; }

   private:
    const LedgerRecords* records_ = nullptr;
    std::size_t index_ = 0;
  };
  using iterator = const_iterator;
  using value_type = nlohmann::json;

  LedgerRecords() = default;
  LedgerRecords(std::initializer_list<nlohmann::json> records);
  LedgerRecords(const std::vector<nlohmann::json>& records);  // NOLINT: a drop-in for a vector

  std::size_t size() const { return spans_.size(); }
  bool empty() const { return spans_.empty(); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, spans_.size()}; }

  // The record at `index`, parsed from its text.
  nlohmann::json operator[](std::size_t index) const;
  nlohmann::json front() const { return (*this)[0]; }
  nlohmann::json back() const { return (*this)[spans_.size() - 1]; }
  // The record's JSON text as stored (a ledger line without its newline).
  std::string_view text(std::size_t index) const;

  void push_back(const nlohmann::json& record) { append_text(record.dump()); }
  // Appends one record's JSON text, which the caller has checked is a ledger record.
  void append_text(std::string_view json_text);
  // Inserts records before `position` (vector-style, for readers that add records not yet written).
  template <typename Iterator>
  void insert(const_iterator position, Iterator first, Iterator last) {
    LedgerRecords added;
    for (; first != last; ++first) added.push_back(*first);
    splice(position.index(), added);
  }
  // Room for `bytes` more text, so that a reader that knows the file sizes grows the buffer once.
  void reserve_text(std::size_t bytes);

  // The records at `indices`, in that order, sharing this container's text.
  LedgerRecords subset(const std::vector<std::size_t>& indices) const;

  // Every record as a DOM, for code that needs random access to parsed records (costs the full DOM).
  std::vector<nlohmann::json> to_vector() const;
  operator std::vector<nlohmann::json>() const { return to_vector(); }  // NOLINT: a drop-in for a vector

  // Bytes held: the shared text plus this container's index (what the memory tests bound).
  std::size_t bytes_held() const;

 private:
  struct Span {
    std::size_t offset = 0;
    std::size_t length = 0;
  };
  // Gives this container its own text before an append when a copy shares it.
  void own_text();
  void splice(std::size_t position, const LedgerRecords& added);

  std::shared_ptr<std::string> text_;
  std::vector<Span> spans_;
};

}  // namespace k3lab::core
