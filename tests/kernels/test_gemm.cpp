// ember's CPU GEMM (kernels/cpu/gemm.h) against an fp64 triple loop: shapes on and off its
// tiles, every transpose, leading dimensions wider than the matrix, beta and the row bias, a
// packed A, threads, on every instruction set this CPU has and on both providers.
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm.h"
#include "kernels/providers.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;
using kernels::cpu::CpuIsa;

namespace {

// A GEMM's operands and output as stored, with room past each row (ld > row length).
template <class T>
struct Case {
  int64_t m, n, k;
  bool ta, tb;
  T beta;
  bool bias;
  int64_t pad = 3;  // extra elements per stored row
  std::vector<T> a, b, c, row_bias;
  int64_t lda, ldb, ldc;

  Case(int64_t m_, int64_t n_, int64_t k_, bool ta_, bool tb_, T beta_, bool bias_, uint32_t seed)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_), beta(beta_), bias(bias_) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> normal;
    const auto draw = [&](int64_t count) {
      std::vector<T> v(static_cast<size_t>(count));
      for (T& x : v) x = static_cast<T>(normal(gen));
      return v;
    };
    lda = (ta ? m : k) + pad;
    ldb = (tb ? k : n) + pad;
    ldc = n + pad;
    a = draw((ta ? k : m) * lda);
    b = draw((tb ? n : k) * ldb);
    c = draw(m * ldc);
    if (beta == T(0)) std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());  // must not be read
    if (bias) row_bias = draw(m);
  }
  T at_a(int64_t i, int64_t p) const { return a[static_cast<size_t>(ta ? p * lda + i : i * lda + p)]; }
  T at_b(int64_t p, int64_t j) const { return b[static_cast<size_t>(tb ? j * ldb + p : p * ldb + j)]; }
  kernels::cpu::MatrixRef<T> a_ref() const { return {a.data(), lda, ta}; }
  kernels::cpu::MatrixRef<T> b_ref() const { return {b.data(), ldb, tb}; }
  kernels::cpu::GemmOutput<T> out(std::vector<T>& dst) const { return {dst.data(), ldc, beta, bias ? row_bias.data() : nullptr}; }

  std::string name() const {
    return "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (ta ? " A^T" : " A") +
           (tb ? " B^T" : " B") + " beta " + std::to_string(beta) + (bias ? " +bias" : "") + " (" +
           kernels::cpu::cpu_isa_name(kernels::cpu::cpu_isa()) + ", " +
           kernels::cpu_gemm_provider_name(kernels::cpu_gemm_provider()) + ")";
  }

  // Compares C (as the GEMM left it in `got`) with the fp64 sum, within gamma(k + 2) of the sum of
  // |terms| (k products, beta C and the bias: tests/support/error_bound.h); the padding past each
  // row must be untouched.
  void check(const std::vector<T>& got) const {
    std::vector<double> actual, expected, magnitude;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, size = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double term = static_cast<double>(at_a(i, p)) * static_cast<double>(at_b(p, j));
          sum += term;
          size += std::fabs(term);
        }
        if (beta != T(0)) {
          const double old = static_cast<double>(beta) * static_cast<double>(c[static_cast<size_t>(i * ldc + j)]);
          sum += old;
          size += std::fabs(old);
        }
        if (bias) {
          sum += static_cast<double>(row_bias[static_cast<size_t>(i)]);
          size += std::fabs(static_cast<double>(row_bias[static_cast<size_t>(i)]));
        }
        actual.push_back(static_cast<double>(got[static_cast<size_t>(i * ldc + j)]));
        expected.push_back(sum);
        magnitude.push_back(size);
      }
    expect_within(from_vector<double>(actual, Shape{m, n}), expected,
                  sum_error_bound(k + 2, DTypeOf<T>::value, magnitude), name());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = n; j < ldc; ++j) {
        const T before = c[static_cast<size_t>(i * ldc + j)], after = got[static_cast<size_t>(i * ldc + j)];
        INFO(name() << ": padding (" << i << ", " << j << ") changed");
        CHECK((after == before || (std::isnan(after) && std::isnan(before))));
      }
  }

  void run_and_check() const {
    std::vector<T> out = c;
    kernels::cpu::gemm<T>(m, n, k, a_ref(), b_ref(), this->out(out));
    check(out);
  }
};

// Every instruction set this CPU has, the portable kernel first.
std::vector<CpuIsa> isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512})
    if (isa <= kernels::cpu::cpu_isa_supported()) out.push_back(isa);
  return out;
}

std::vector<kernels::CpuGemmProvider> providers() {
  std::vector<kernels::CpuGemmProvider> out{kernels::CpuGemmProvider::ember};
  if (kernels::cpu_gemm_provider_available(kernels::CpuGemmProvider::openblas))
    out.push_back(kernels::CpuGemmProvider::openblas);
  return out;
}

// Sizes around every kernel's tiles (mr 6 and 8, nr 16 and 48, 8 and 16 lanes), blocks (kc 256,
// mc 240 and 256) and the dot-product path (A B^T with n <= 16, k >= 256: blocks of 4 x 3 or
// 3 x 3 and every remainder of rows and columns, the last vector of the sum masked), the narrow
// last panels of B the edge kernel takes (1-7 columns past a whole panel, over more panels of A
// than one group of accumulators holds), and a few far from them.
struct Shape3 {
  int64_t m, n, k;
};
const std::vector<Shape3> kShapes = {
    {1, 1, 1},    {1, 17, 5},    {9, 1, 33},     {3, 5, 7},     {4, 24, 16},   {8, 48, 64},    {7, 23, 1},
    {5, 25, 31},  {9, 49, 130},  {16, 16, 257},  {17, 47, 129}, {33, 97, 100}, {12, 200, 300}, {65, 15, 64},
    {100, 7, 9},  {257, 50, 20}, {40, 300, 260}, {2, 1000, 3},  {1, 64, 513},  {300, 1, 300},
    {7, 9, 784},  {6, 14, 301},  {5, 11, 260},  {5, 17, 256},  {100, 49, 288}, {64, 196, 40}, {29, 35, 70},  {70, 102, 300},
};

}  // namespace

TEST_CASE("gemm matches an fp64 loop: shapes, transposes, leading dims, beta, bias, every ISA and provider",
          "[gemm]") {
  uint32_t seed = 1;
  for (kernels::CpuGemmProvider provider : providers()) {
    const kernels::CpuGemmScope use(provider);
    for (CpuIsa isa : isas()) {
      const kernels::cpu::CpuIsaScope scope(isa);
      for (const Shape3& s : kShapes)
        for (int flags = 0; flags < 4; ++flags) {
          const bool ta = (flags & 1) != 0, tb = (flags & 2) != 0;
          Case<float>(s.m, s.n, s.k, ta, tb, 0.0f, false, seed++).run_and_check();
          Case<float>(s.m, s.n, s.k, ta, tb, 1.0f, (flags & 1) == 0, seed++).run_and_check();
          Case<float>(s.m, s.n, s.k, ta, tb, -0.5f, true, seed++).run_and_check();
          Case<double>(s.m, s.n, s.k, ta, tb, 1.0, true, seed++).run_and_check();
        }
    }
  }
}

TEST_CASE("gemm with an empty sum (k = 0) is beta C plus the bias", "[gemm]") {
  for (kernels::CpuGemmProvider provider : providers()) {
    const kernels::CpuGemmScope use(provider);
    Case<float>(5, 7, 0, false, false, 0.0f, false, 1).run_and_check();
    Case<float>(5, 7, 0, false, true, 1.0f, true, 2).run_and_check();
    Case<float>(5, 7, 0, true, false, 2.0f, true, 3).run_and_check();
  }
}

TEST_CASE("gemm split over threads matches the fp64 loop, whichever dimension is split", "[gemm]") {
  const int threads = omp_get_max_threads();
  for (CpuIsa isa : isas()) {
    const kernels::cpu::CpuIsaScope scope(isa);
    for (int count : {1, 2, 3}) {
      omp_set_num_threads(count);
      Case<float>(150, 333, 97, false, false, 0.0f, true, 11).run_and_check();   // columns split
      Case<float>(333, 70, 97, true, true, 1.0f, true, 12).run_and_check();      // rows split
      Case<float>(129, 129, 300, false, true, 1.0f, false, 13).run_and_check();  // several blocks of the sum
    }
  }
  omp_set_num_threads(threads);
}

// bench-train's GFLOP/s: each thread counts into a slot of its own; the sum must miss none.
TEST_CASE("cpu_product_flops counts 2 m n k for every product, whichever threads run them", "[gemm]") {
  const Case<float> c(20, 30, 40, false, false, 0.0f, false, 50);
  for (int threads : {1, 2, 3}) {
    const int64_t before = kernels::cpu::cpu_product_flops();
    int products = 0;
#pragma omp parallel num_threads(threads) reduction(+ : products)
    for (int repeat = 0; repeat < 5; ++repeat) {
      std::vector<float> out = c.c;
      kernels::cpu::gemm<float>(c.m, c.n, c.k, c.a_ref(), c.b_ref(), c.out(out));
      ++products;
    }
    INFO(threads << " threads, " << products << " products");
    CHECK(products >= 5);
    CHECK(kernels::cpu::cpu_product_flops() - before == int64_t{products} * 2 * c.m * c.n * c.k);
  }
}

TEST_CASE("gemm with A packed once serves many products, on every ISA and provider", "[gemm]") {
  for (kernels::CpuGemmProvider provider : providers()) {
    const kernels::CpuGemmScope use(provider);
    for (CpuIsa isa : isas()) {
      const kernels::cpu::CpuIsaScope scope(isa);
      for (const Shape3& s : {Shape3{16, 100, 144}, Shape3{13, 49, 300}, Shape3{64, 784, 27}, Shape3{3, 5, 0}})
        for (bool ta : {false, true}) {
          const Case<float> first(s.m, s.n, s.k, ta, false, 0.0f, true, 21);
          const kernels::cpu::PackedA<float> packed(s.m, s.k, first.a_ref());
          for (uint32_t image = 0; image < 3; ++image) {
            Case<float> other(s.m, s.n, s.k, ta, image == 1, image == 2 ? 1.0f : 0.0f, image != 1, 30 + image);
            other.a = first.a;  // the same A, new B and C
            std::vector<float> out = other.c;
            kernels::cpu::gemm(packed, s.n, other.b_ref(), other.out(out));
            other.check(out);
          }
        }
    }
  }
}

// Winograd's weight gradient lays out dM^T with rows of gemm_transposed_a_rows(m) so the kernel
// reads it in place; the rows' tail past m is read by the last panel and must not reach C, even
// when it holds NaN.
TEST_CASE("gemm reads a transposed A with rows of gemm_transposed_a_rows in place, its tail never in C", "[gemm]") {
  for (CpuIsa isa : isas()) {
    const kernels::cpu::CpuIsaScope scope(isa);
    for (const Shape3& s : {Shape3{16, 16, 196}, Shape3{32, 32, 196}, Shape3{64, 64, 192}, Shape3{13, 20, 50}}) {
      Case<float> k(s.m, s.n, s.k, true, false, 1.0f, false, 40);
      const int64_t rows = kernels::cpu::gemm_transposed_a_rows<float>(s.m);
      INFO(k.name() << ", stored rows of " << rows);
      CHECK(rows >= s.m);
      k.lda = rows;
      k.a.assign(static_cast<size_t>(s.k * rows), std::numeric_limits<float>::quiet_NaN());
      std::mt19937 gen(41);
      std::normal_distribution<float> normal;
      for (int64_t p = 0; p < s.k; ++p)
        for (int64_t i = 0; i < s.m; ++i) k.a[static_cast<size_t>(p * rows + i)] = normal(gen);
      k.run_and_check();
    }
  }
}

TEST_CASE("gemm refuses a packed A used on another instruction set, and names both", "[gemm]") {
  if (isas().size() < 2 || !kernels::cpu_gemm_provider_available(kernels::CpuGemmProvider::ember)) return;
  const kernels::CpuGemmScope use(kernels::CpuGemmProvider::ember);
  const Case<float> c(8, 8, 8, false, false, 0.0f, false, 1);
  const kernels::cpu::PackedA<float> packed(8, 8, c.a_ref());
  // another instruction set than the one it was packed for (EMBER_CPU_ISA may name any)
  const CpuIsa packed_for = kernels::cpu::cpu_isa(), other = packed_for == CpuIsa::baseline ? isas().back() : CpuIsa::baseline;
  const kernels::cpu::CpuIsaScope scope(other);
  std::vector<float> out = c.c;
  CHECK_THROWS_WITH(kernels::cpu::gemm(packed, 8, c.b_ref(), c.out(out)),
                    Catch::Matchers::Contains("packed for") &&
                        Catch::Matchers::Contains(kernels::cpu::cpu_isa_name(packed_for)) &&
                        Catch::Matchers::Contains(kernels::cpu::cpu_isa_name(other)));
}

TEST_CASE("EMBER_CPU_GEMM names the provider, and one this build lacks is refused", "[gemm]") {
  CHECK(std::string(kernels::cpu_gemm_provider_name(kernels::CpuGemmProvider::ember)) == "ember");
  CHECK(std::string(kernels::cpu_gemm_provider_name(kernels::CpuGemmProvider::openblas)) == "openblas");
  CHECK(kernels::cpu_gemm_provider_available(kernels::CpuGemmProvider::ember));
  if (!kernels::cpu_gemm_provider_available(kernels::CpuGemmProvider::openblas))
    CHECK_THROWS_WITH(kernels::set_cpu_gemm_provider(kernels::CpuGemmProvider::openblas),
                      Catch::Matchers::Contains("no OpenBLAS"));
}
