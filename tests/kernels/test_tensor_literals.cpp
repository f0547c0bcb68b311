// ember::tensor({...}), from_blob and libtorch's dtype spellings (kernels/factories.h).
#include <vector>

#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

TEST_CASE("tensor(): floating lists give f32, whole numbers i64, options override", "[factories]") {
  const Tensor f = tensor({1.5, 2.0, -3.0});
  CHECK(f.dtype() == kFloat);
  CHECK(f.shape() == Shape{3});
  CHECK(f.to_vector<float>() == std::vector<float>{1.5f, 2.0f, -3.0f});

  const Tensor i = tensor({1, 2, 3});
  CHECK(i.dtype() == kLong);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});
  CHECK(tensor({int64_t{1} << 40}).to_vector<int64_t>() == std::vector<int64_t>{int64_t{1} << 40});

  const Tensor m = tensor({{1, 2}, {3, 4}, {5, 6}});
  CHECK(m.dtype() == kInt64);
  CHECK(m.shape() == Shape{3, 2});
  CHECK(m.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  const Tensor mf = tensor({{0.5, 1.0}, {2.0, 4.0}});
  CHECK(mf.dtype() == kFloat32);
  CHECK(mf.shape() == Shape{2, 2});

  CHECK(tensor({1, 2}, kFloat).dtype() == kFloat);
  CHECK(tensor({1.0, 2.0}, kDouble).to_vector<double>() == std::vector<double>{1.0, 2.0});
  CHECK(tensor({{1.0, 2.0}}, TensorOptions(kHalf)).dtype() == kFloat16);
  CHECK(tensor({1.0}, TensorOptions().requires_grad()).requires_grad());
  expect_error_contains([] { tensor({{1, 2}, {3}}); }, {"tensor", "row 0 has 2 values", "row 1 has 1"});
}

TEST_CASE("libtorch's dtype spellings name ember's dtypes", "[factories]") {
  CHECK(kFloat == DType::f32);
  CHECK(kFloat32 == DType::f32);
  CHECK(kDouble == DType::f64);
  CHECK(kHalf == DType::f16);
  CHECK(kFloat16 == DType::f16);
  CHECK(kLong == DType::i64);
  CHECK(kInt64 == DType::i64);
  CHECK(kByte == DType::u8);
}

TEST_CASE("from_blob shares the caller's memory and never frees it", "[factories]") {
  std::vector<float> pixels = {1, 2, 3, 4, 5, 6};
  {
    Tensor t = from_blob(pixels.data(), {2, 3});
    CHECK(t.dtype() == kFloat);
    CHECK(t.shape() == Shape{2, 3});
    CHECK(t.data_ptr() == pixels.data());
    pixels[4] = 50;  // the caller's writes show
    CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 50, 6});
    t.mul_(2.0);  // and the tensor's reach the caller
    Tensor view = t.reshape({6});
    CHECK(view.shares_storage(t));
  }
  // The tensors are gone; the vector still owns its bytes (a free here would be a double free).
  CHECK(pixels == std::vector<float>{2, 4, 6, 8, 100, 12});

  std::vector<int64_t> labels = {3, 1};
  CHECK(from_blob(labels.data(), {2}, kLong).to_vector<int64_t>() == labels);
  expect_error_contains([] { from_blob(nullptr, {2}); }, {"from_blob", "null"});
}
