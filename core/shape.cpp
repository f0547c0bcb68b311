#include "core/shape.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace ember {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> strides(sizes_.size());
  int64_t stride = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(sizes_[i], 1);
  }
  return strides;
}

std::string Shape::str() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes_.size(); ++i) os << (i ? ", " : "") << sizes_[i];
  os << "]";
  return os.str();
}

Shape Shape::transposed(int64_t d0, int64_t d1) const {
  std::vector<int64_t> sizes = sizes_;
  std::swap(sizes[static_cast<size_t>(d0)], sizes[static_cast<size_t>(d1)]);
  return Shape(std::move(sizes));
}

int64_t Shape::wrap_dim(int64_t d, const char* op) const {
  const int64_t n = dim();
  const int64_t lo = n == 0 ? -1 : -n, hi = n == 0 ? 0 : n - 1;
  EMBER_CHECK(d >= lo && d <= hi,
              op << ": dim " << d << " is out of range for a tensor of shape " << str()
                 << " (expected " << lo << ".." << hi << ")");
  return d < 0 ? d + std::max<int64_t>(n, 1) : d;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int64_t n = std::max(a.dim(), b.dim());
  EMBER_CHECK(n <= kMaxBroadcastDims, op << ": broadcasting supports at most " << kMaxBroadcastDims << " dims, got " << n
                                         << " (" << a << " and " << b << ")");
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ai = a.dim() - n + i, bi = b.dim() - n + i;
    const int64_t sa = ai >= 0 ? a[ai] : 1, sb = bi >= 0 ? b[bi] : 1;
    EMBER_CHECK(sa == sb || sa == 1 || sb == 1,
                op << ": shapes " << a << " and " << b << " do not broadcast (dim " << i
                   << ": " << sa << " vs " << sb << ")");
    out[static_cast<size_t>(i)] = sa == 1 ? sb : sa;
  }
  return Shape(std::move(out));
}

}  // namespace ember
