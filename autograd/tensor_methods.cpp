// The Tensor methods that compute, declared in core/tensor.h for a libtorch-like
// API: each forwards to a free function of autograd/ops.h or kernels/.
#include <iomanip>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "core/simulation.h"
#include "kernels/ops.h"
#include "memory/empty.h"

namespace ember {

Tensor Tensor::reshape(const Shape& shape) const { return ember::reshape(*this, shape); }

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape(Shape{1});
  start_dim = shape().wrap_dim(start_dim, "flatten");
  end_dim = shape().wrap_dim(end_dim, "flatten");
  EMBER_CHECK(start_dim <= end_dim, "flatten: start_dim " << start_dim << " is after end_dim " << end_dim);
  std::vector<int64_t> sizes;
  int64_t merged = 1;
  for (int64_t d = 0; d < dim(); ++d) {
    if (d < start_dim || d > end_dim) {
      sizes.push_back(size(d));
    } else {
      merged *= size(d);
      if (d == end_dim) sizes.push_back(merged);
    }
  }
  return reshape(Shape(sizes));
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::run_backward(*this, gradient, retain_graph);
}

Tensor Tensor::to(Device device) const { return to_device(*this, device); }
Tensor Tensor::to(DType dtype) const { return to_dtype(*this, dtype); }
Tensor Tensor::to(Device device, DType dtype) const { return to_dtype(to_device(*this, device), dtype); }

Tensor Tensor::clone() const {
  Tensor copy = empty_like(*this);
  kernels::copy_(copy, *this);
  return copy;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (simulating()) return std::vector<T>(static_cast<size_t>(numel()), static_cast<T>(0.0f));  // a shape-only run has no values
  Tensor host = kernels::cast(to_device(detach(), kCPU), DTypeOf<T>::value);
  const T* p = host.data<T>();
  return std::vector<T>(p, p + host.numel());
}

template <class T>
T Tensor::item() const {
  EMBER_CHECK(numel() == 1, "item: the tensor " << shape() << " has " << numel() << " elements, expected 1");
  return to_vector<T>()[0];
}

Scalar Tensor::item() const {
  if (is_floating(dtype())) return Scalar(item<double>());
  return Scalar(item<int64_t>());
}

#define EMBER_INSTANTIATE(T) \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(Half)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint8_t)
#undef EMBER_INSTANTIATE

#define EMBER_BINARY_OP(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads)
#define EMBER_BINARY_OP_PUBLIC(name, forward, grad_a, grad_b, grad_a_reads, grad_b_reads) \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); }
#include "core/binary_ops.def"
#undef EMBER_BINARY_OP_PUBLIC
#undef EMBER_BINARY_OP
Tensor Tensor::pow(double exponent) const { return ember::pow(*this, exponent); }
#define EMBER_COMPARE_OP(name, forward)                                          \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); } \
  Tensor Tensor::name(double s) const { return ember::name(*this, s); }
#include "core/compare_ops.def"
#undef EMBER_COMPARE_OP
#define EMBER_UNARY_OP(name, forward, derivative, saves)
#define EMBER_UNARY_OP_PUBLIC(name, forward, derivative, saves) \
  Tensor Tensor::name() const { return ember::name(*this); }
#include "core/unary_ops.def"
#undef EMBER_UNARY_OP_PUBLIC
#undef EMBER_UNARY_OP
Tensor Tensor::sum() const { return ember::sum(*this); }
Tensor Tensor::sum(int64_t dim, bool keepdim) const { return ember::sum(*this, dim, keepdim); }
Tensor Tensor::mean() const { return ember::mean(*this); }
Tensor Tensor::mean(int64_t dim, bool keepdim) const { return ember::mean(*this, dim, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::max(int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return ember::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return ember::transpose(*this, dim0, dim1); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, dim); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return ember::permute(*this, dims); }
Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

namespace {

// In-place methods are never recorded. With grad mode on they refuse a tensor that requires grad:
// a leaf (a parameter: PyTorch refuses it too; optimizers update under NoGradGuard) and a computed
// tensor (PyTorch would record the op; here the graph would silently miss it, e.g. y.mul_(3) would
// leave y's gradient unscaled). Writes into saved tensors, under any grad mode, are caught at
// backward by the version counter (autograd/node.h: Node::saved).
void check_inplace(const Tensor& t, const char* op) {
  if (!t.defined() || !GradMode::is_enabled() || !t.requires_grad()) return;
  EMBER_CHECK(!t.is_leaf(), op << ": a leaf tensor " << t.shape()
                               << " that requires grad is being used in an in-place operation; update it under "
                                  "NoGradGuard (as optimizers do) or use an out-of-place op");
  EMBER_THROW(op << ": a tensor " << t.shape() << " that requires grad (computed by " << t.grad_fn()->name()
                 << ") is being used in an in-place operation, which autograd does not record; use an "
                    "out-of-place op, or make the change under NoGradGuard if its gradient must not see it");
}

}  // namespace

Tensor& Tensor::zero_() {
  check_inplace(*this, "zero_");
  kernels::fill_(*this, 0.0);
  return *this;
}
Tensor& Tensor::fill_(double value) {
  check_inplace(*this, "fill_");
  kernels::fill_(*this, value);
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace(*this, "copy_");
  kernels::copy_(*this, src);
  return *this;
}
Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace(*this, "add_");
  kernels::add_(*this, other, alpha);
  return *this;
}
Tensor& Tensor::mul_(double factor) {
  check_inplace(*this, "mul_");
  kernels::mul_scalar_(*this, factor);
  return *this;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double s) { return add(a, s); }
Tensor operator-(const Tensor& a, double s) { return sub(a, s); }
Tensor operator*(const Tensor& a, double s) { return mul(a, s); }
Tensor operator/(const Tensor& a, double s) { return div(a, s); }
Tensor operator+(double s, const Tensor& a) { return add(a, s); }
Tensor operator-(double s, const Tensor& a) { return rsub(a, s); }
Tensor operator*(double s, const Tensor& a) { return mul(a, s); }
Tensor operator/(double s, const Tensor& a) { return rdiv(a, s); }
Tensor operator-(const Tensor& a) { return neg(a); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  constexpr int64_t kMaxPrinted = 32;
  os << t.str();
  if (t.requires_grad()) os << " requires_grad";
  os << "\n[";
  const Tensor head = t.numel() > kMaxPrinted ? t.detach().reshape(Shape{t.numel()}) : t.detach();
  const bool integral = t.dtype() == DType::i64 || t.dtype() == DType::u8;
  const std::vector<double> values = head.to_vector<double>();
  const size_t shown = std::min<size_t>(values.size(), kMaxPrinted);
  const int64_t row = t.dim() >= 1 ? std::max<int64_t>(t.size(-1), 1) : 1;
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) os << ((static_cast<int64_t>(i) % row == 0) ? ",\n " : ", ");
    if (integral) os << static_cast<int64_t>(values[i]);
    else os << std::setprecision(5) << values[i];
  }
  if (values.size() > shown) os << ", ... (" << t.numel() << " elements)";
  return os << "]";
}

}  // namespace ember
