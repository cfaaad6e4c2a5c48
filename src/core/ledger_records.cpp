#include "k3lab/core/ledger_records.hpp"

#include <stdexcept>

namespace k3lab::core {

LedgerRecords::LedgerRecords(std::initializer_list<nlohmann::json> records) {
  for (const auto& record : records) push_back(record);
}

LedgerRecords::LedgerRecords(const std::vector<nlohmann::json>& records) {
  for (const auto& record : records) push_back(record);
}

nlohmann::json LedgerRecords::operator[](std::size_t index) const { return nlohmann::json::parse(text(index)); }

std::string_view LedgerRecords::text(std::size_t index) const {
  if (index >= spans_.size()) {
    throw std::out_of_range("ledger record " + std::to_string(index) + " of " + std::to_string(spans_.size()));
  }
  const Span& span = spans_[index];
  return std::string_view(*text_).substr(span.offset, span.length);
}

void LedgerRecords::own_text() {
  if (!text_) {
    text_ = std::make_shared<std::string>();
  } else if (text_.use_count() > 1) {
    text_ = std::make_shared<std::string>(*text_);
  }
}

void LedgerRecords::append_text(std::string_view json_text) {
  own_text();
  spans_.push_back({text_->size(), json_text.size()});
  text_->append(json_text);
}

void LedgerRecords::reserve_text(std::size_t bytes) {
  own_text();
  text_->reserve(text_->size() + bytes);
}

void LedgerRecords::splice(std::size_t position, const LedgerRecords& added) {
  own_text();
  std::vector<Span> inserted;
  inserted.reserve(added.size());
  for (std::size_t i = 0; i < added.size(); ++i) {
    const auto piece = added.text(i);
    inserted.push_back({text_->size(), piece.size()});
    text_->append(piece);
  }
  spans_.insert(spans_.begin() + static_cast<std::ptrdiff_t>(position), inserted.begin(), inserted.end());
}

LedgerRecords LedgerRecords::subset(const std::vector<std::size_t>& indices) const {
  LedgerRecords out;
  out.text_ = text_;
  out.spans_.reserve(indices.size());
  for (const std::size_t index : indices) {
    if (index >= spans_.size()) throw std::out_of_range("ledger record " + std::to_string(index) + " in a subset");
    out.spans_.push_back(spans_[index]);
  }
  return out;
}

std::vector<nlohmann::json> LedgerRecords::to_vector() const {
  std::vector<nlohmann::json> out;
  out.reserve(spans_.size());
  for (std::size_t i = 0; i < spans_.size(); ++i) out.push_back((*this)[i]);
  return out;
}

std::size_t LedgerRecords::bytes_held() const {
  return (text_ ? text_->capacity() : 0) + spans_.capacity() * sizeof(Span);
}

}  // namespace k3lab::core
