#pragma once
// Byte sizes for the allocator tests: `f.alloc(3 * kMiB)`.
#include <cstddef>

namespace ember::test {
inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * 1024;
}  // namespace ember::test
