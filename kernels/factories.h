#pragma once
// Tensor factories, libtorch style:
//
//   auto a = ember::zeros({2, 3});
//   auto b = ember::randn({64, 10}, ember::TensorOptions().device(ember::kCUDA));
//   auto c = ember::from_vector<float>({1, 2, 3, 4}, {2, 2});
//   auto i = ember::arange(0, 10);            // i64 [10]
#include <vector>

#include "core/tensor.h"
#include "memory/empty.h"

namespace ember {

Tensor zeros(const Shape& shape, TensorOptions options = {});
Tensor ones(const Shape& shape, TensorOptions options = {});
Tensor full(const Shape& shape, double value, TensorOptions options = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
// [start, end) in steps; i64 unless options say otherwise.
Tensor arange(double start, double end, double step = 1.0, TensorOptions options = TensorOptions(DType::i64));
// Uniform in [low, high) and normal(mean, std), from the global Philox generator.
Tensor rand(const Shape& shape, TensorOptions options = {}, double low = 0.0, double high = 1.0);
Tensor randn(const Shape& shape, TensorOptions options = {}, double mean = 0.0, double std = 1.0);
// A random permutation of 0..n-1 (i64, CPU), from the global generator.
Tensor randperm(int64_t n);
// Copies host values into a new tensor; T's dtype is the tensor's dtype unless
// options name another (values are then converted).
template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, TensorOptions options = TensorOptions(DTypeOf<T>::value));
// A 0-d tensor.
Tensor scalar_tensor(double value, TensorOptions options = {});

}  // namespace ember
