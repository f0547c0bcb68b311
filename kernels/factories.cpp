#include "kernels/factories.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/philox.h"
#include "kernels/ops.h"

namespace ember {

Tensor full(const Shape& shape, double value, TensorOptions options) {
  const bool requires_grad = options.requires_grad_;
  Tensor t = empty(shape, options.requires_grad(false));
  kernels::fill_(t, value);
  if (requires_grad) t.requires_grad_();
  return t;
}

Tensor zeros(const Shape& shape, TensorOptions options) { return full(shape, 0.0, options); }
Tensor ones(const Shape& shape, TensorOptions options) { return full(shape, 1.0, options); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), TensorOptions().dtype(t.dtype()).device(t.device())); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), TensorOptions().dtype(t.dtype()).device(t.device())); }

Tensor arange(double start, double end, double step, TensorOptions options) {
  EMBER_CHECK(step != 0.0, "arange: step must not be 0");
  const double count = std::ceil((end - start) / step);
  Tensor t = empty(Shape{count > 0 ? static_cast<int64_t>(count) : 0}, options);
  kernels::arange_(t, start, step);
  return t;
}

namespace {

// A tensor filled by `fill` from the generator's next Philox counters, `per_counter` draws each
// (uniform: 4 lanes; normal: 2, a Box-Muller pair). The fill writes it before any graph sees it.
template <class Fill>
Tensor drawn(const Shape& shape, TensorOptions options, uint64_t per_counter, const Fill& fill) {
  const bool requires_grad = options.requires_grad_;
  Tensor t = empty(shape, options.requires_grad(false));
  fill(t, reserve_random((static_cast<uint64_t>(t.numel()) + per_counter - 1) / per_counter));
  if (requires_grad) t.requires_grad_();
  return t;
}

}  // namespace

Tensor rand(const Shape& shape, TensorOptions options, double low, double high) {
  return drawn(shape, options, 4, [&](const Tensor& t, GeneratorState s) { kernels::uniform_(t, s, low, high); });
}

Tensor randn(const Shape& shape, TensorOptions options, double mean, double std) {
  return drawn(shape, options, 2, [&](const Tensor& t, GeneratorState s) { kernels::normal_(t, s, mean, std); });
}

Tensor randperm(int64_t n) {
  Tensor t = arange(0, static_cast<double>(n));
  int64_t* p = t.data<int64_t>();
  const GeneratorState state = reserve_random(static_cast<uint64_t>(n));
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates with Philox draws
    const uint32_t r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(i)).v[0];
    const int64_t j = static_cast<int64_t>(r % static_cast<uint32_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return t;
}

template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, TensorOptions options) {
  EMBER_CHECK(static_cast<int64_t>(values.size()) == shape.numel(),
              "from_vector: " << values.size() << " values do not fill shape " << shape << " (" << shape.numel()
                              << " elements)");
  const bool requires_grad = options.requires_grad_;
  Tensor host = empty(shape, TensorOptions(DTypeOf<T>::value));
  if (!values.empty()) std::memcpy(host.data_ptr(), values.data(), values.size() * sizeof(T));
  Tensor t = host;
  if (options.dtype_ != host.dtype() || options.device_ != host.device()) {
    t = empty(shape, TensorOptions().dtype(options.dtype_).device(options.device_));
    kernels::copy_(t, host);
  }
  if (requires_grad) t.requires_grad_();
  return t;
}
template Tensor from_vector<float>(const std::vector<float>&, const Shape&, TensorOptions);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&, TensorOptions);
template Tensor from_vector<Half>(const std::vector<Half>&, const Shape&, TensorOptions);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&, TensorOptions);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, const Shape&, TensorOptions);

Tensor scalar_tensor(double value, TensorOptions options) { return full(Shape{}, value, options); }

}  // namespace ember
