// Slice: a non-owning view of bytes.
//
// A Slice does not own its data. The caller must keep the referenced memory alive and unchanged
// for as long as the Slice is used; every function that returns a Slice says how long it lives.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace kvbench {

class Slice {
 public:
  Slice() = default;
  Slice(const char* data, size_t size) : data_(data), size_(size) {}
  Slice(const std::string& s) : data_(s.data()), size_(s.size()) {}  // NOLINT: implicit by design
  Slice(const char* s) : data_(s), size_(std::strlen(s)) {}          // NOLINT: implicit by design

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string ToString() const { return std::string(data_, size_); }
  std::string_view view() const { return std::string_view(data_, size_); }

  // Byte-wise comparison: <0, 0 or >0 as memcmp, shorter prefix first.
  int compare(const Slice& b) const {
    const size_t n = size_ < b.size_ ? size_ : b.size_;
    int r = n == 0 ? 0 : std::memcmp(data_, b.data_, n);
    if (r == 0) r = size_ < b.size_ ? -1 : (size_ > b.size_ ? 1 : 0);
    return r;
  }

 private:
  const char* data_ = "";
  size_t size_ = 0;
};

inline bool operator==(const Slice& a, const Slice& b) {
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}
inline bool operator!=(const Slice& a, const Slice& b) { return !(a == b); }

}  // namespace kvbench
