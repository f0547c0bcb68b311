// narrow, select and slice: libtorch's arguments turned into one kernels::SliceArgs. The result
// is a view of x's storage when the elements taken are one contiguous run of it (free, like
// reshape), a copy otherwise; backward writes dy into zeros of x's shape either way.
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/record.h"
#include "core/error.h"
#include "kernels/ops.h"

namespace ember {

namespace {

using kernels::SliceArgs;

class SliceBackward final : public autograd::Node {
 public:
  // drops_dim: select's output has no dim s.dim; the gradient gets it back as size 1.
  SliceBackward(const char* op, Shape input_shape, SliceArgs s, bool drops_dim)
      : op_(op), input_shape_(std::move(input_shape)), s_(s), drops_dim_(drops_dim) {}
  const char* name() const override { return op_; }
  std::vector<Tensor> apply(const Tensor& dy) override {
    Shape sliced = input_shape_;
    sliced[s_.dim] = s_.length;
    const Tensor g = drops_dim_ ? dy.detach().reshape(sliced) : dy;
    return {kernels::slice_backward(g, input_shape_, s_)};
  }

 private:
  const char* op_;
  Shape input_shape_;
  SliceArgs s_;
  bool drops_dim_;
};

// Whether the elements s takes are one run of x's contiguous storage: everything before dim is a
// single index (or the slice is all of dim), and the elements along dim are adjacent.
bool is_contiguous_run(const Shape& shape, const SliceArgs& s) {
  int64_t outer = 1;
  for (int64_t d = 0; d < s.dim; ++d) outer *= shape[d];
  const bool adjacent = s.step == 1 || s.length <= 1;
  const bool whole = s.start == 0 && s.length == shape[s.dim] && adjacent;
  return whole || (outer == 1 && adjacent);
}

// x's elements s takes, shaped `shape` (s's slice shape, or select's with the dim dropped), and
// recorded as op.
Tensor take(const char* op, const Tensor& x, const SliceArgs& s, bool drops_dim) {
  Shape shape = x.shape();
  shape[s.dim] = s.length;
  if (drops_dim) {
    std::vector<int64_t> sizes = shape.sizes();
    sizes.erase(sizes.begin() + s.dim);
    shape = Shape(sizes);
  }
  Tensor y;
  if (is_contiguous_run(x.shape(), s)) {
    const TensorImpl& impl = *x.impl();
    const size_t start_bytes = static_cast<size_t>(s.start * x.shape().strides()[static_cast<size_t>(s.dim)]) *
                               x.element_size();
    y = Tensor(impl.storage, impl.offset_bytes + start_bytes, shape, impl.dtype, impl.device);
  } else {
    y = kernels::slice(x, s).detach().reshape(shape);  // the reshape of a tensor without history records nothing
  }
  if (autograd::any_requires_grad({x}))
    autograd::record(y, std::make_shared<SliceBackward>(op, x.shape(), s, drops_dim), {x});
  return y;
}

// The wrapped dim of a tensor with at least one dim, and its size.
int64_t checked_dim(const Tensor& x, int64_t dim, const char* op) {
  EMBER_CHECK(x.defined(), op << ": the tensor is undefined");
  EMBER_CHECK(x.dim() > 0, op << ": cannot be applied to a 0-dim tensor");
  return x.shape().wrap_dim(dim, op);
}

// select, naming `op` (select, or operator[]) in its errors.
Tensor select_as(const Tensor& x, int64_t dim, int64_t index, const char* op) {
  dim = checked_dim(x, dim, op);
  const int64_t size = x.size(dim);
  EMBER_CHECK(index >= -size && index < size, op << ": index " << index << " is out of range for size " << size
                                                  << " of dim " << dim << " of " << x.shape() << " (expected "
                                                  << -size << ".." << size - 1 << ")");
  if (index < 0) index += size;
  return take(op, x, SliceArgs{dim, index, 1, 1}, true);
}

}  // namespace

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  dim = checked_dim(x, dim, "narrow");
  const int64_t size = x.size(dim);
  EMBER_CHECK(length >= 0, "narrow: length must be non-negative, got " << length);
  EMBER_CHECK(start >= -size && start <= size, "narrow: start " << start << " is out of range for size " << size
                                                                 << " of dim " << dim << " of " << x.shape()
                                                                 << " (expected " << -size << ".." << size << ")");
  if (start < 0) start += size;
  EMBER_CHECK(start + length <= size, "narrow: start " << start << " + length " << length << " exceeds size " << size
                                                        << " of dim " << dim << " of " << x.shape());
  return take("narrow", x, SliceArgs{dim, start, length, 1}, false);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) { return select_as(x, dim, index, "select"); }

// libtorch's x[i]; here rather than in autograd/tensor_methods.cpp so that its errors name it.
Tensor Tensor::operator[](int64_t index) const { return select_as(*this, 0, index, "operator[]"); }

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = checked_dim(x, dim, "slice");
  EMBER_CHECK(step >= 1, "slice: step must be positive, got " << step << " for dim " << dim << " of " << x.shape());
  const int64_t size = x.size(dim);
  // Python's rules: negative bounds count from the end, then both clamp to [0, size], end >= start.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  return take("slice", x, SliceArgs{dim, start, (end - start + step - 1) / step, step}, false);
}

}  // namespace ember
