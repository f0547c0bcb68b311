// Entry points that losses built from other ops need (autograd/functions/loss.cpp).
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"
#include "kernels/factories.h"

namespace ember::kernels {

Tensor one_hot(const Tensor& labels, int64_t classes, DType dtype, const char* op) {
  check_dtype(labels, DType::i64, op, "labels");
  EMBER_CHECK(labels.dim() == 1, op << ": expected labels [N], got " << labels.shape());
  EMBER_CHECK(classes > 0, op << ": the number of classes must be positive, got " << classes);
  check_label_range(labels, classes, op);
  const int64_t n = labels.size(0);
  const TensorOptions options = TensorOptions(dtype).device(labels.device());
  // scatter_dim writes ones [N, 1] at the labels seen as indices [N, 1] (the same bytes).
  const Tensor indices(labels.storage(), labels.impl()->offset_bytes, Shape{n, 1}, labels.dtype(), labels.device());
  return scatter_dim(ones({n, 1}, options), indices, Shape{n, classes}, 1);
}

}  // namespace ember::kernels
