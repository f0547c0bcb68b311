#include "core/tensor.h"

#include <sstream>

#include "core/error.h"

namespace ember {

Tensor::Tensor(std::shared_ptr<Storage> storage, size_t offset_bytes, Shape shape, DType dtype,
               Device device)
    : impl_(std::make_shared<TensorImpl>()) {
  impl_->storage = std::move(storage);
  impl_->offset_bytes = offset_bytes;
  impl_->shape = std::move(shape);
  impl_->dtype = dtype;
  impl_->device = device;
}

TensorImpl& Tensor::checked_impl() const {
  EMBER_CHECK(impl_ != nullptr, "use of an undefined tensor");
  return *impl_;
}

const Shape& Tensor::shape() const { return checked_impl().shape; }
DType Tensor::dtype() const { return checked_impl().dtype; }
Device Tensor::device() const { return checked_impl().device; }
const std::shared_ptr<Storage>& Tensor::storage() const { return checked_impl().storage; }

int64_t Tensor::size(int64_t d) const { return shape()[shape().wrap_dim(d, "size")]; }

void* Tensor::data_ptr() const {
  const TensorImpl& impl = checked_impl();
  if (!impl.storage) return nullptr;
  return static_cast<char*>(impl.storage->buffer.data()) + impl.offset_bytes;
}

template <class T>
T* Tensor::data() const {
  EMBER_CHECK(dtype() == DTypeOf<T>::value,
              "data<" << dtype_name(DTypeOf<T>::value) << ">() called on a " << dtype_name(dtype())
                      << " tensor");
  return static_cast<T*>(data_ptr());
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;
template Half* Tensor::data<Half>() const;
template int64_t* Tensor::data<int64_t>() const;
template uint8_t* Tensor::data<uint8_t>() const;

bool Tensor::shares_storage(const Tensor& o) const {
  return defined() && o.defined() && storage() == o.storage();
}

uint64_t Tensor::version() const {
  const TensorImpl& impl = checked_impl();
  return impl.storage ? impl.storage->version.load(std::memory_order_relaxed) : 0;
}

void Tensor::bump_version() const {
  const TensorImpl& impl = checked_impl();
  if (impl.storage) impl.storage->version.fetch_add(1, std::memory_order_relaxed);
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor" << shape() << " " << dtype_name(dtype()) << " " << device();
  return os.str();
}

bool Tensor::requires_grad() const { return checked_impl().autograd.requires_grad; }

Tensor& Tensor::requires_grad_(bool requires) {
  TensorImpl& impl = checked_impl();
  EMBER_CHECK(!requires || is_floating(impl.dtype),
              "requires_grad_: only floating tensors can require gradients, got " << dtype_name(impl.dtype));
  EMBER_CHECK(impl.autograd.grad_fn == nullptr || requires,
              "requires_grad_(false) on a non-leaf tensor; use detach()");
  impl.autograd.requires_grad = requires;
  return *this;
}

Tensor Tensor::grad() const {
  const auto& g = checked_impl().autograd.grad;
  return g ? Tensor(g) : Tensor();
}

void Tensor::set_grad(const Tensor& grad) const {
  checked_impl().autograd.grad = grad.impl_;
}

void Tensor::set_post_accumulate_grad_hook(std::function<void(const Tensor& leaf)> hook) const {
  EMBER_CHECK(is_leaf(), "set_post_accumulate_grad_hook: " << str()
                                                             << " is not a leaf: its gradient flows on to the inputs it was computed from");
  checked_impl().autograd.post_accumulate_grad_hook = std::move(hook);
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const { return checked_impl().autograd.grad_fn; }

Tensor Tensor::detach() const {
  const TensorImpl& impl = checked_impl();
  return Tensor(impl.storage, impl.offset_bytes, impl.shape, impl.dtype, impl.device);
}

void Tensor::zero_grad() const { checked_impl().autograd.grad.reset(); }

}  // namespace ember
