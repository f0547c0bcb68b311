#pragma once
// Tensor factories, libtorch style:
//
//   auto a = ember::zeros({2, 3});
//   auto b = ember::randn({64, 10}, ember::TensorOptions().device(ember::kCUDA));
//   auto c = ember::from_vector<float>({1, 2, 3, 4}, {2, 2});
//   auto i = ember::arange(0, 10);            // i64 [10]
//   auto t = ember::tensor({{1, 2}, {3, 4}});   // i64 [2, 2]; tensor({0.5, 1.5}) is f32 [2]
//   auto v = ember::from_blob(pixels, {28, 28}, ember::kFloat);   // shares the caller's memory
#include <cstdint>
#include <initializer_list>
#include <type_traits>
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

// Tensors from literal lists, as libtorch's torch::tensor: floating values give f32, whole
// numbers i64, unless options name a dtype. A list mixing both ({1, 2.5}) is ambiguous in C++:
// write 1.0. Nested lists must be rectangular.
using FloatList = std::initializer_list<double>;
using IntList = std::initializer_list<int>;
using LongList = std::initializer_list<int64_t>;
Tensor tensor(FloatList values);
Tensor tensor(IntList values);
Tensor tensor(LongList values);
Tensor tensor(FloatList values, TensorOptions options);
Tensor tensor(IntList values, TensorOptions options);

namespace detail {
Tensor tensor_rows(const std::vector<std::vector<double>>& rows, TensorOptions options);
Tensor tensor_rows(const std::vector<std::vector<int64_t>>& rows, TensorOptions options);
}  // namespace detail

// Rows deduce their element type: overloads on initializer_list<FloatList>, <IntList> and
// <LongList> are ambiguous to clang (gcc picks one), so one template serves them all.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, TensorOptions options) {
  using Wide = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  std::vector<std::vector<Wide>> wide;
  for (const auto& row : rows) wide.emplace_back(row.begin(), row.end());
  return detail::tensor_rows(wide, options);
}
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows) {
  return tensor(rows, TensorOptions(std::is_floating_point_v<T> ? kFloat : kLong));
}

// A tensor over memory the caller owns: no copy, and nothing is freed when the last handle
// goes. The caller keeps `data` alive (and unchanged, unless writes are meant to show) for as
// long as the tensor or anything sharing its storage (views, saved tensors) lives. `data` holds
// shape.numel() contiguous elements of options' dtype on options' device (host memory for the
// CPU, device memory for CUDA). Its bytes are not counted by the allocator's stats.
Tensor from_blob(void* data, const Shape& shape, TensorOptions options = {});

}  // namespace ember
