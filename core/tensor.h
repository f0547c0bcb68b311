#pragma once
// Tensor: a refcounted handle to contiguous storage with a shape, a dtype and a
// device, plus the autograd fields. Copying a Tensor shares it (like libtorch);
// clone() copies the bytes. reshape/view (and unsqueeze/squeeze) share storage, and so
// do narrow/select/slice when the elements they take are one contiguous run; every
// other op materialises its output.
//
//   ember::Tensor x = ember::randn({64, 784});
//   ember::Tensor w = ember::zeros({784, 10}).requires_grad_();
//   ember::Tensor loss = ember::cross_entropy(x.matmul(w), labels);
//   loss.backward();
//   std::cout << w.grad().sum().item<float>();
//
// The methods that compute (to, clone, the ops, backward, printing) are declared
// here for a libtorch-like API and defined in autograd/tensor_methods.cpp, the
// layer that records graphs; factories live in kernels/factories.h.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/scalar.h"
#include "core/shape.h"

namespace ember {

namespace autograd {
class Node;
}
class Tensor;

// Shared by a tensor and all its views (reshape, detach(), saved tensors).
struct Storage {
  Buffer buffer;
  // PyTorch's version counter: every in-place write through any alias bumps it once
  // (kernels/checks.h: bump_version, called by the in-place entry points of kernels/),
  // and a node that saved the tensor for backward refuses it when the count moved
  // (autograd/node.h: Node::saved). It counts writes, not values: a factory that fills
  // through kernels/ writes once, so zeros(), full() and randn() return version 1, empty() 0.
  std::atomic<uint64_t> version{0};
};

struct TensorImpl;

struct AutogradMeta {
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;             // leaf gradient, accumulated by backward
  std::shared_ptr<autograd::Node> grad_fn;      // the node that produced this tensor
  std::weak_ptr<autograd::Node> grad_accumulator;  // a leaf's AccumulateGrad node, shared by its uses
  // A leaf's: runs after a backward has added all of its gradient into .grad (set_post_accumulate_grad_hook).
  std::function<void(const Tensor& leaf)> post_accumulate_grad_hook;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  size_t offset_bytes = 0;
  Shape shape;
  DType dtype = DType::f32;
  Device device;
  AutogradMeta autograd;
};

// Options for factories, chainable: TensorOptions().dtype(kFloat16).device(kCUDA)
struct TensorOptions {
  DType dtype_ = DType::f32;
  Device device_;
  bool requires_grad_ = false;
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions& dtype(DType d) { dtype_ = d; return *this; }
  TensorOptions& device(Device d) { device_ = d; return *this; }
  TensorOptions& requires_grad(bool r = true) { requires_grad_ = r; return *this; }
};

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  // Wraps existing storage (used by memory/ and views).
  Tensor(std::shared_ptr<Storage> storage, size_t offset_bytes, Shape shape, DType dtype, Device device);

  // --- metadata (core/tensor.cpp) ---
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  std::vector<int64_t> sizes() const { return shape().sizes(); }
  int64_t dim() const { return shape().dim(); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return shape().numel(); }
  DType dtype() const;
  Device device() const;
  bool is_cuda() const { return device().is_cuda(); }
  size_t element_size() const { return dtype_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  void* data_ptr() const;
  template <class T> T* data() const;  // checks that T matches dtype()
  const std::shared_ptr<Storage>& storage() const;
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  bool shares_storage(const Tensor& o) const;
  std::string str() const;  // "Tensor[2, 3] f32 cpu"

  // --- version counter: lives in the Storage, so views and detach() aliases share it ---
  uint64_t version() const;   // in-place writes to the storage so far (0 for storage-less tensors)
  void bump_version() const;  // records one in-place write (kernels/ calls it; const like the write itself)

  // --- views: share storage; recorded by autograd (autograd/tensor_methods.cpp) ---
  Tensor reshape(const Shape& shape) const;  // one size may be -1
  Tensor view(const Shape& shape) const { return reshape(shape); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;

  // --- autograd ---
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires = true);
  Tensor grad() const;                 // undefined until a backward reached it
  void set_grad(const Tensor& grad) const;
  // Runs hook(leaf) each time a backward has added all of its gradient into .grad, as
  // PyTorch's register_post_accumulate_grad_hook: the moment the gradient is ready (data-parallel
  // training starts reducing it then, train/data_parallel.h). One hook per leaf; an empty one removes it.
  void set_post_accumulate_grad_hook(std::function<void(const Tensor& leaf)> hook) const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const { return grad_fn() == nullptr; }
  Tensor detach() const;               // shares storage, no history
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  void zero_grad() const;              // drops .grad (set_to_none semantics)

  // --- conversions and copies ---
  Tensor to(Device device) const;
  Tensor to(DType dtype) const;
  Tensor to(Device device, DType dtype) const;
  Tensor clone() const;
  Tensor contiguous() const { return *this; }  // always contiguous; kept for libtorch code
  template <class T> T item() const;                // numel must be 1: loss.item<float>()
  // The one element as a Scalar (core/scalar.h), exact for integer dtypes: loss.item().toFloat(),
  // or simply a double: double l = loss.item();
  Scalar item() const;
  template <class T> std::vector<T> to_vector() const;

  // --- ops (autograd/tensor_methods.cpp); see autograd/ops.h for the free functions ---
#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads)
#define EMBER_BINARY_OP_PUBLIC(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  Tensor name(const Tensor& o) const;
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
  Tensor pow(double exponent) const;
  // Comparisons (core/compare_ops.def: eq, ne, lt, le, gt, ge): u8 1 or 0, see autograd/ops.h.
#define EMBER_COMPARE_OP(name, forward) \
  Tensor name(const Tensor& o) const;   \
  Tensor name(double s) const;
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
#define EMBER_UNARY_OP(name, forward, derivative, saves)
#define EMBER_UNARY_OP_PUBLIC(name, forward, derivative, saves) Tensor name() const;
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
  Tensor sum() const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  Tensor max(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;  // 2-D only
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const { return transpose(0, 1); }
  // Views or copies as autograd/ops.h says (narrow, select, slice: a view when contiguous).
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  // w[i]: select(0, i), libtorch's indexing with one integer (a view; negative i counts from the
  // end; out of range throws, naming operator[], i and the shape). Defined in autograd/functions/slice.cpp.
  Tensor operator[](int64_t index) const;
  Tensor slice(int64_t dim = 0, int64_t start = 0, int64_t end = INT64_MAX, int64_t step = 1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // --- in place, never recorded (optimizers, initialisers); each bumps version() ---
  // With grad mode on they refuse a tensor that requires grad (a leaf, or computed: the op would
  // be missing from its graph); update parameters under NoGradGuard, as optimizers do.
  Tensor& zero_();
  Tensor& fill_(double value);
  Tensor& copy_(const Tensor& src);  // same shape; converts dtype and device
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& mul_(double factor);

 private:
  TensorImpl& checked_impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);
Tensor operator-(const Tensor& a);

// Prints shape, dtype, device and (up to a few dozen) values.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace ember
