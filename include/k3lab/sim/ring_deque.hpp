#pragma once
// A growable ring buffer with O(1) push/pop at both ends and no allocation once it has grown to
// its working size (std::deque allocates a chunk every few hundred pushes).
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace k3lab::sim {

template <class T>
class RingDeque {
 public:
  RingDeque() { buffer_.resize(16); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void reserve(std::size_t capacity) {
    if (capacity > buffer_.size()) grow(capacity);
  }
  void push_back(const T& value) {
    if (size_ == buffer_.size()) grow(buffer_.size() * 2);
    buffer_[(head_ + size_) & (buffer_.size() - 1)] = value;
    ++size_;
  }
  void push_front(const T& value) {
    if (size_ == buffer_.size()) grow(buffer_.size() * 2);
    head_ = (head_ + buffer_.size() - 1) & (buffer_.size() - 1);
    buffer_[head_] = value;
    ++size_;
  }
  const T& front() const {
    if (size_ == 0) throw std::logic_error("RingDeque::front on an empty deque");
    return buffer_[head_];
  }
  void pop_front() {
    if (size_ == 0) throw std::logic_error("RingDeque::pop_front on an empty deque");
    head_ = (head_ + 1) & (buffer_.size() - 1);
    --size_;
  }
  const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("RingDeque::at");
    return buffer_[(head_ + i) & (buffer_.size() - 1)];
  }

 private:
  void grow(std::size_t at_least) {
    std::size_t capacity = buffer_.size();
    while (capacity < at_least) capacity *= 2;
    std::vector<T> next(capacity);
    for (std::size_t i = 0; i < size_; ++i) next[i] = buffer_[(head_ + i) & (buffer_.size() - 1)];
    buffer_.swap(next);
    head_ = 0;
  }

  std::vector<T> buffer_;  // capacity is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace k3lab::sim
