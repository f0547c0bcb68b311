#include "kernels/cpu/broadcast.h"

namespace ember::kernels::cpu {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(static_cast<size_t>(out.dim()), 0);
  const std::vector<int64_t> in_strides = in.strides();
  const int64_t lead = out.dim() - in.dim();
  for (int64_t d = 0; d < in.dim(); ++d)
    strides[static_cast<size_t>(lead + d)] = in[d] == 1 ? 0 : in_strides[static_cast<size_t>(d)];
  return strides;
}

}  // namespace ember::kernels::cpu
