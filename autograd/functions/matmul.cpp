// matmul and its gradient: dA = dC B^T, dB = A^T dC. A batched A times a shared
// 2-D B folds the batch into the rows for dB.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

class MatmulBackward final : public autograd::Node {
 public:
  MatmulBackward(bool need_a, bool need_b, bool shared_b) : need_a_(need_a), need_b_(need_b), shared_b_(shared_b) {}
  const char* name() const override { return "matmul"; }
  std::vector<Tensor> apply(const Tensor& dc) override {
    const Tensor& a = saved(0);
    const Tensor& b = saved(1);
    Tensor da, db;
    if (need_a_) da = kernels::matmul(dc, b, false, true);
    if (need_b_) {
      if (shared_b_) {  // b itself is not saved when it needs a gradient but a does not
        const Tensor a2 = a.reshape(Shape{a.size(0) * a.size(1), a.size(2)});
        const Tensor dc2 = dc.detach().reshape(Shape{dc.size(0) * dc.size(1), dc.size(2)});
        db = kernels::matmul(a2, dc2, true, false);
      } else {
        db = kernels::matmul(a, dc, true, false);
      }
    }
    return {da, db};
  }

 private:
  bool need_a_, need_b_;
  bool shared_b_;  // a [B, M, K] times a 2-D b shared by every batch
};

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  Tensor c = kernels::matmul(a, b, false, false);
  if (autograd::any_requires_grad({a, b})) {
    auto node = std::make_shared<MatmulBackward>(a.requires_grad(), b.requires_grad(), a.dim() == 3 && b.dim() == 2);
    node->save(b.requires_grad() ? a : Tensor());  // dB needs A
    node->save(a.requires_grad() ? b : Tensor());  // dA needs B
    autograd::record(c, node, {a, b});
  }
  return c;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), "mm: both matrices must be defined");
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2,
              "mm: expected two 2-D matrices, got " << a.shape() << " and " << b.shape() << " (matmul takes batches)");
  EMBER_CHECK(a.size(1) == b.size(0), "mm: " << a.shape() << " and " << b.shape() << " cannot be multiplied ("
                                             << a.size(1) << " columns against " << b.size(0) << " rows)");
  return matmul(a, b);
}

}  // namespace ember
