#pragma once
// Shape: the sizes of a tensor's dimensions, outermost first. A 0-d shape is a
// scalar (numel 1); a shape with a 0 size is empty (numel 0).
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace ember {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> sizes) : sizes_(sizes) {}
  explicit Shape(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {}

  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const;
  int64_t operator[](int64_t d) const { return sizes_[static_cast<size_t>(d)]; }
  int64_t& operator[](int64_t d) { return sizes_[static_cast<size_t>(d)]; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  std::vector<int64_t> strides() const;  // contiguous, in elements
  std::string str() const;               // "[2, 3]"
  Shape transposed(int64_t d0, int64_t d1) const;  // dims d0 and d1 swapped (both already wrapped)

  // Wraps a possibly negative dim into [0, dim()); throws naming `op` if out of range.
  int64_t wrap_dim(int64_t d, const char* op) const;

  bool operator==(const Shape& o) const { return sizes_ == o.sizes_; }
  bool operator!=(const Shape& o) const { return sizes_ != o.sizes_; }

 private:
  std::vector<int64_t> sizes_;
};

inline std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

// Every backend broadcasts up to this many dims (CUDA's index math holds them in registers).
inline constexpr int64_t kMaxBroadcastDims = 8;

// NumPy broadcasting: aligns trailing dims; each pair must be equal or contain a 1.
// Throws naming `op` and both shapes when they do not broadcast or have too many dims.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace ember
