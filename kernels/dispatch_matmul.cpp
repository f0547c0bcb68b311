// Checked entry point of matmul (kernels/{cpu,cuda}/matmul).
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  check_defined(a, "matmul", "a");
  check_defined(b, "matmul", "b");
  check_compatible(a, b, "matmul");
  check_floating(a, "matmul");
  EMBER_CHECK((a.dim() == 2 || a.dim() == 3) && (b.dim() == 2 || b.dim() == 3) && !(a.dim() == 2 && b.dim() == 3),
              "matmul: expected [M, K] x [K, N], [B, M, K] x [B, K, N] or [B, M, K] x [K, N], got " << a.shape()
                                                                                                    << " and " << b.shape());
  const int64_t k_a = transpose_a ? a.size(-2) : a.size(-1);
  const int64_t k_b = transpose_b ? b.size(-1) : b.size(-2);
  EMBER_CHECK(k_a == k_b, "matmul: inner dimensions differ, " << a.shape() << (transpose_a ? "^T" : "") << " x "
                                                              << b.shape() << (transpose_b ? "^T" : "") << " ("
                                                              << k_a << " vs " << k_b << ")");
  EMBER_CHECK(a.dim() == 2 || b.dim() == 2 || a.size(0) == b.size(0),
              "matmul: batch sizes differ, " << a.shape() << " and " << b.shape());
  const int64_t m = transpose_a ? a.size(-1) : a.size(-2);
  const int64_t n = transpose_b ? b.size(-2) : b.size(-1);
  OpNameScope scope("matmul");
  Tensor c = empty(a.dim() == 3 ? Shape{a.size(0), m, n} : Shape{m, n}, TensorOptions(a.dtype()).device(a.device()));
  if (c.numel() == 0) return c;
  if (k_a == 0) EMBER_BACKEND(c.device(), fill_, c, 0.0);  // an empty sum
  else EMBER_BACKEND_WITH_SCRATCH(a.device(), matmul, a, b, transpose_a, transpose_b, c);
  return c;
}

}  // namespace ember::kernels
