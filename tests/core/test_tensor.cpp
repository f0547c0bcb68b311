#include <cmath>
#include <sstream>

#include "core/cuda_runtime.h"
#include "core/generator.h"
#include "core/philox.h"
#include "memory/memory.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("shape arithmetic and broadcasting", "[core]") {
  CHECK(Shape{2, 3, 4}.numel() == 24);
  CHECK(Shape{}.numel() == 1);
  CHECK(Shape{3, 0}.numel() == 0);
  CHECK(Shape{2, 3, 4}.strides() == std::vector<int64_t>{12, 4, 1});
  CHECK(Shape{2, 3}.str() == "[2, 3]");
  CHECK(Shape{2, 3}.wrap_dim(-1, "t") == 1);
  CHECK(broadcast_shapes({4, 1, 3}, {2, 1}, "t") == Shape{4, 2, 3});
  CHECK(broadcast_shapes({}, {5}, "t") == Shape{5});
  expect_error_contains([] { broadcast_shapes({2, 3}, {4}, "add"); }, {"add", "[2, 3]", "[4]"});
  expect_error_contains([] { Shape{2, 3}.wrap_dim(2, "sum"); }, {"sum", "dim 2", "[2, 3]"});
}

TEST_CASE("devices and dtypes parse and print", "[core]") {
  CHECK(Device("cpu").is_cpu());
  CHECK(Device("cuda:1").index == 1);
  CHECK(Device("cuda").str() == "cuda:0");
  expect_error_contains([] { Device("gpu"); }, {"bad device", "gpu"});
  // The index is plain decimal digits within int: strtol used to take spaces and signs, and
  // cuda:4294967296 wrapped to cuda:0.
  CHECK(Device("cuda:007").index == 7);
  for (const char* bad : {"cuda:4294967296", "cuda:2147483648", "cuda: 1", "cuda:+1", "cuda:-0", "cuda:1 ", "cuda:0x1",
                          "cuda:1e3", "cuda:inf", "cuda:"})
    expect_error_contains([&] { Device{bad}; }, {"bad device", std::string("'") + bad + "'", "cuda:N"});
  CHECK(parse_dtype("float16") == DType::f16);
  CHECK(dtype_size(DType::f16) == 2);
  expect_error_contains([] { parse_dtype("bf16"); }, {"unknown dtype", "bf16"});
}

TEST_CASE("half conversion rounds to nearest even and keeps specials", "[core][f16]") {
  CHECK(float(Half(1.0f)) == 1.0f);
  CHECK(float(Half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(float(Half(70000.0f))));
  CHECK(float(Half(1.0f + 1.0f / 2048)) == 1.0f);          // a tie rounds to even
  CHECK(float(Half(1.0f + 3.0f / 2048)) == 1.0f + 2.0f / 1024);
  CHECK(float(Half(5.96046448e-08f)) == 5.96046448e-08f);  // smallest subnormal
  CHECK(std::isnan(float(Half(NAN))));
  CHECK(float(Half(-2.5f)) == -2.5f);
  for (float v : {0.1f, 3.14159f, -123.456f, 1e-4f})  // normal halves: one rounding, relative error <= 2^-11
    CHECK(std::fabs(double(float(Half(v))) - double(v)) <= std::fabs(double(v)) * test::unit_roundoff(kFloat16));
}

TEST_CASE("Philox matches the published known-answer vector", "[core][rng]") {
  // Random123's kat_vectors: philox4x32-10 with counter 0 and key 0.
  const PhiloxOutput r = philox4x32(0, 0);
  CHECK(r.v[0] == 0x6627e8d5u);
  CHECK(r.v[1] == 0xe169c58du);
  CHECK(r.v[2] == 0xbc57ac4cu);
  CHECK(r.v[3] == 0x9b00dbd8u);
}

TEST_CASE("the same seed gives the same numbers", "[core][rng]") {
  manual_seed(7);
  const std::vector<float> a = randn({100}).to_vector<float>();
  manual_seed(7);
  const std::vector<float> b = randn({100}).to_vector<float>();
  CHECK(a == b);
  const std::vector<float> c = randn({100}).to_vector<float>();
  CHECK(a != c);
  manual_seed(1);
  const std::vector<float> u = rand({10000}).to_vector<float>();
  double mean = 0;
  for (float v : u) {
    CHECK(v >= 0.0f);
    CHECK(v < 1.0f);
    mean += v;
  }
  CHECK(std::fabs(mean / 10000 - 0.5) < 0.02);  // 0.5 +- ~7 sigma of the sample mean
}

TEST_CASE("factories, reshape views and copies", "[core]") {
  Tensor z = zeros({2, 3});
  expect_values(z, {0, 0, 0, 0, 0, 0}, 0, "zeros");
  expect_values(full({2}, 1.5), {1.5, 1.5}, 0, "full");
  Tensor r = arange(0, 6);
  CHECK(r.dtype() == DType::i64);
  expect_values(r, {0, 1, 2, 3, 4, 5}, 0, "arange");
  Tensor x = arange(0, 6, 1, kFloat32);
  Tensor v = x.reshape({2, -1});
  CHECK(v.shape() == Shape{2, 3});
  CHECK(v.shares_storage(x));
  v.fill_(4.0);
  expect_values(x, {4, 4, 4, 4, 4, 4}, 0, "a view writes through");
  Tensor c = x.clone();
  CHECK_FALSE(c.shares_storage(x));
  expect_error_contains([&] { x.reshape({4, 2}); }, {"reshape", "[6]", "[4, 2]"});
  CHECK(x.flatten().shape() == Shape{6});
  CHECK(zeros({2, 3, 4}).flatten(1).shape() == Shape{2, 12});
}

TEST_CASE("conversions: to(dtype), item, to_vector, printing", "[core]") {
  Tensor x = from_vector<float>({1.5f, -2.25f}, {2});
  CHECK(x.to(kFloat64).to_vector<double>() == std::vector<double>{1.5, -2.25});
  CHECK(x.to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, -2});
  CHECK(scalar_tensor(3.0).item<float>() == 3.0f);
  expect_error_contains([&] { x.item<float>(); }, {"item", "[2]"});
  std::ostringstream os;
  os << x;
  CHECK(os.str().find("Tensor[2] f32 cpu") != std::string::npos);
  CHECK(os.str().find("-2.25") != std::string::npos);
  expect_error_contains([&] { x.data<double>(); }, {"data<f64>", "f32"});
  expect_error_contains([] { from_vector<float>({1, 2, 3}, {2, 2}); }, {"from_vector", "3 values", "[2, 2]"});
}

TEST_CASE("every tensor byte is counted under its category", "[core][memory]") {
  const MemoryStats before = memory_stats(kCPU);
  {
    CategoryScope scope(MemoryCategory::parameter);
    Tensor p = empty({1024});
    const MemoryStats during = memory_stats(kCPU);
    const auto k = static_cast<size_t>(MemoryCategory::parameter);
    CHECK(during.by_category[k].current - before.by_category[k].current == 4096);
  }
  CHECK(memory_stats(kCPU).allocated_bytes.current == before.allocated_bytes.current);
  Tensor nothing = empty({0, 5});
  CHECK(nothing.data_ptr() == nullptr);
  CHECK(memory_stats(kCPU).allocated_bytes.current == before.allocated_bytes.current);
}

TEST_CASE("cuda requests fail clearly without a GPU", "[core]") {
  if (cuda::is_available()) return;  // covered by the cuda: tests on a GPU machine
  CHECK(cuda::device_count() == 0);
  expect_error_contains([] { zeros({2}, TensorOptions().device(kCUDA)); }, {"cuda:0"});
}
