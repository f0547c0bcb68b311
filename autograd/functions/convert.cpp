// Differentiable dtype casts and device moves: the gradient goes back the same way.
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/ops.h"
#include "core/cuda_runtime.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember {

namespace {

class ToDTypeBackward final : public autograd::Node {
 public:
  explicit ToDTypeBackward(DType from) : from_(from) {}
  const char* name() const override { return "to_dtype"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {kernels::cast(dy, from_)}; }

 private:
  DType from_;
};

class ToDeviceBackward final : public autograd::Node {
 public:
  explicit ToDeviceBackward(Device from) : from_(from) {}
  const char* name() const override { return "to_device"; }
  std::vector<Tensor> apply(const Tensor& dy) override { return {to_device(dy, from_)}; }

 private:
  Device from_;
};

}  // namespace

Tensor to_dtype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = kernels::cast(x, dtype);
  if (autograd::any_requires_grad({x}) && is_floating(dtype))
    autograd::record(y, std::make_shared<ToDTypeBackward>(x.dtype()), {x});
  return y;
}

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  cuda::check_device(device, "to");
  Tensor y = empty(x.shape(), TensorOptions().dtype(x.dtype()).device(device));
  kernels::copy_(y, x);
  if (autograd::any_requires_grad({x})) autograd::record(y, std::make_shared<ToDeviceBackward>(x.device()), {x});
  return y;
}

}  // namespace ember
