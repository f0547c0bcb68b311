#include "tests/support/error_bound.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "kernels/factories.h"

namespace ember::test {

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f64: return std::ldexp(1.0, -53);
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f16: return std::ldexp(1.0, -11);
    default: return 0;  // integers are exact
  }
}

double underflow_error(DType dtype) {
  switch (dtype) {
    case DType::f64: return std::ldexp(1.0, -1075);
    case DType::f32: return std::ldexp(1.0, -150);
    case DType::f16: return std::ldexp(1.0, -25);
    default: return 0;
  }
}

DType accumulation_dtype(DType dtype) { return dtype == DType::f16 ? DType::f32 : dtype; }

double gamma(int64_t n, DType dtype) {
  const double nu = static_cast<double>(n) * unit_roundoff(dtype);
  EMBER_CHECK(nu < 1, "gamma(" << n << ") in " << dtype << ": n u >= 1, the bound says nothing");
  return nu / (1 - nu);
}

double ErrorModel::bound(DType dtype, double magnitude) const {
  const double roundings = static_cast<double>(stored);
  return (roundings * unit_roundoff(dtype) + gamma(terms + computed, accumulation_dtype(dtype))) * magnitude +
         roundings * underflow_error(dtype);
}

Tensor ErrorModel::bound(DType dtype, const Tensor& magnitude) const {
  std::vector<double> m = magnitude.to_vector<double>();
  for (double& v : m) v = bound(dtype, v);
  return from_vector<double>(m, magnitude.shape(), TensorOptions(DType::f64));
}

std::vector<double> sum_error_bound(int64_t terms, DType dtype, const std::vector<double>& magnitude) {
  const DType acc = accumulation_dtype(dtype);
  const bool narrower = acc != dtype;
  const double g = gamma(terms, acc) + (narrower ? unit_roundoff(dtype) : 0.0);
  const double floor = narrower ? underflow_error(dtype) : 0.0;
  std::vector<double> bound(magnitude.size());
  for (size_t i = 0; i < magnitude.size(); ++i) bound[i] = g * magnitude[i] + floor;
  return bound;
}

Tensor sum_error_bound(int64_t terms, DType dtype, const Tensor& magnitude) {
  return from_vector<double>(sum_error_bound(terms, dtype, magnitude.to_vector<double>()), magnitude.shape(),
                             TensorOptions(DType::f64));
}

Tensor batch_norm_mean_bound(const Tensor& x, double eps) {
  EMBER_CHECK(x.dim() >= 2, "batch_norm_mean_bound: expected x [N, C, ...], got " << x.shape());
  const std::vector<double> v = x.to_vector<double>();
  const int64_t batch = x.size(0), channels = x.size(1), inner = x.numel() / std::max<int64_t>(1, batch * channels);
  const int64_t count = batch * inner;
  std::vector<double> bound(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    double mean = 0, mean_abs = 0, max_abs = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        const double value = v[static_cast<size_t>((n * channels + c) * inner + i)];
        mean += value / static_cast<double>(count);
        mean_abs += std::fabs(value) / static_cast<double>(count);
        max_abs = std::max(max_abs, std::fabs(value));
      }
    double var = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        const double value = v[static_cast<size_t>((n * channels + c) * inner + i)];
        var += (value - mean) * (value - mean) / static_cast<double>(count);
      }
    const double magnitude = (mean_abs + max_abs) / std::sqrt(var + eps);
    bound[static_cast<size_t>(c)] = ErrorModel{2 * count, 8, 2}.bound(x.dtype(), magnitude);
  }
  return from_vector<double>(bound, Shape{channels}, TensorOptions(DType::f64));
}

Tensor elementwise_max(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.shape() == b.shape(), "elementwise_max: shapes " << a.shape() << " and " << b.shape());
  std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::max(x[i], y[i]);
  return from_vector<double>(x, a.shape(), TensorOptions(DType::f64));
}

void expect_within(const Tensor& actual, const std::vector<double>& expected, const std::vector<double>& bound,
                   const std::string& op) {
  const std::vector<double> a = actual.to_vector<double>();
  INFO(op << ": output " << actual.str());
  REQUIRE(a.size() == expected.size());
  REQUIRE(bound.size() == expected.size());
  // The worst element is the one with the largest error over its bound; an error over a zero
  // bound is infinitely bad, a NaN where none was expected too.
  double worst = -1;
  size_t worst_index = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same_special = (std::isnan(a[i]) && std::isnan(expected[i])) || (std::isinf(a[i]) && a[i] == expected[i]);
    const double err = same_special ? 0.0 : std::fabs(a[i] - expected[i]);
    double ratio = err == 0 ? 0.0 : bound[i] > 0 ? err / bound[i] : INFINITY;
    if (std::isnan(ratio)) ratio = INFINITY;  // a NaN where a number was expected, or the reverse
    if (ratio > worst) {
      worst = ratio;
      worst_index = i;
    }
  }
  if (a.empty()) return;
  INFO(op << ": worst at flat index " << worst_index << ": got " << a[worst_index] << ", expected "
          << expected[worst_index] << ", |difference| " << std::fabs(a[worst_index] - expected[worst_index])
          << ", bound " << bound[worst_index] << " (" << worst << " of the bound)");
  CHECK(worst <= 1.0);
}

void expect_within(const Tensor& actual, const Tensor& expected, const Tensor& bound, const std::string& op) {
  INFO(op << ": shapes " << actual.shape() << " vs " << expected.shape() << " (bound " << bound.shape() << ")");
  REQUIRE(actual.shape() == expected.shape());
  REQUIRE(bound.shape() == expected.shape());
  expect_within(actual, expected.to_vector<double>(), bound.to_vector<double>(), op);
}

}  // namespace ember::test
