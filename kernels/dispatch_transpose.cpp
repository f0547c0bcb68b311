// Checked entry point of transpose (kernels/{cpu,cuda}/transpose).
#include <algorithm>

#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels {

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  check_defined(x, "transpose", "x");
  dim0 = x.shape().wrap_dim(dim0, "transpose");
  dim1 = x.shape().wrap_dim(dim1, "transpose");
  const int64_t d0 = std::min(dim0, dim1), d1 = std::max(dim0, dim1);
  OpNameScope scope("transpose");
  Tensor y = empty(x.shape().transposed(d0, d1), TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() == 0) return y;
  if (d0 == d1) {
    copy_(y, x);
    return y;
  }
  TransposeLayout t;
  for (int64_t d = 0; d < d0; ++d) t.outer *= x.size(d);
  for (int64_t d = d0 + 1; d < d1; ++d) t.mid *= x.size(d);
  for (int64_t d = d1 + 1; d < x.dim(); ++d) t.inner *= x.size(d);
  t.a = x.size(d0);
  t.b = x.size(d1);
  EMBER_BACKEND(x.device(), transpose, x, t, y);
  return y;
}

}  // namespace ember::kernels
