#pragma once
// A short contiguous row copied inline, for the convolutions' per-row copies (Winograd's padded
// planes and output rows, im2col's rows): std::copy's memmove call costs more than a 28-float row
// (ConvNet's planes), and a plain loop runs a scalar tail as long as its vector body on a 14- or
// 7-float row (ResNet-20's).
//
//   copy_row(plane + y * w, w, padded + (y + 1) * pw + 1);
#include <cstdint>
#include <cstring>

namespace ember::kernels::cpu {

// dst[i] = src[i] for i < n (src and dst apart): 32-byte blocks, the last one overlapping the one
// before (the same values written twice), and two overlapping 16-byte blocks below 32 bytes.
template <class T>
inline void copy_row(const T* src, int64_t n, T* dst) {
  constexpr int64_t kBlock = 32 / static_cast<int64_t>(sizeof(T)), kHalf = kBlock / 2;
  if (n >= kBlock) {
    for (int64_t i = 0; i + kBlock < n; i += kBlock) std::memcpy(dst + i, src + i, 32);
    std::memcpy(dst + n - kBlock, src + n - kBlock, 32);
  } else if (n >= kHalf) {
    std::memcpy(dst, src, 16);
    std::memcpy(dst + n - kHalf, src + n - kHalf, 16);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

}  // namespace ember::kernels::cpu
