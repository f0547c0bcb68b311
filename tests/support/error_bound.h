#pragma once
// Rounding-error bounds: how far a computation in a working precision may land from its exact
// (fp64) value, derived from what it computes, never a constant that happens to pass here.
//
//   // y = a b in f32: each element sums 53 products, in whatever order the BLAS picks
//   const Tensor magnitude = matmul(abs(a64), abs(b64));          // sum |products|, per element
//   expect_within(y, y64, sum_error_bound(53, DType::f32, magnitude), "matmul");
//
// The bound (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1, Lemma 3.1
// and (3.5)): a sum of n products computed in floating point, in any order, blocked or split
// over threads, with or without fused multiply-adds, differs from the exact sum by at most
//   gamma(n) * sum |products|,   gamma(n) = n u / (1 - n u),   u the unit roundoff.
// OpenBLAS's AVX2 and AVX-512 kernels, cuBLAS and a threaded reduction only change the order,
// so a comparison against this bound cannot fail from rounding alone, while a wrong index or a
// dropped term is off by a whole term and still fails it. Where the exact sum cancels (random
// signs), sum |products| is much larger than |sum|: that is where a tolerance relative to the
// result breaks on another machine, and why the magnitude is an input here.
//
// For operations that are not plain sums (exp, tanh, a division, a square root), each rounding
// or library call costs a few units of roundoff relative to its result; ErrorModel counts them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember::test {

// 2^-53 (f64), 2^-24 (f32), 2^-11 (f16): half the gap between 1 and the next number.
double unit_roundoff(DType dtype);
// Half the smallest subnormal: the absolute error a rounding can make where the result
// underflows (Higham §2.1: fl(x) = x (1 + d) + e, |e| <= this). 2^-25 for f16, where gradients of
// 1e-8 are routine; 2^-150 for f32, 2^-1075 for f64.
double underflow_error(DType dtype);
// The precision sums run in when the data is `dtype`: f16 is a storage type that every kernel
// widens to f32, f32 and f64 accumulate in themselves (kernels that use a wider one only do better).
DType accumulation_dtype(DType dtype);
// n u / (1 - n u) in `dtype`'s unit roundoff; requires n u < 1.
double gamma(int64_t n, DType dtype);

// The error of a computation whose data is `dtype`, per element:
//   bound = (stored u + gamma(terms + computed) in the accumulation precision) * magnitude
//   terms     the longest sum of products an element is made of;
//   computed  other roundings in the accumulation precision, in units of its roundoff: 1 per
//             arithmetic operation, twice its documented maximum ulps per library function (an ulp
//             is at most 2u): CUDA's expf/tanhf/erff 2 ulps, logf 1, powf 4; glibc's 1 to 2;
//   stored    roundings to `dtype` itself on the way: the result, and each intermediate kept in
//             the dtype (f16 activations, a saved output a backward reads, optimizer state); each
//             may also underflow, which adds underflow_error(dtype) per rounding;
//   magnitude sum |terms| where it is known, else a size the case states (|result| + 1 for O(1) data).
// gamma(n) bounds n roundings of one product or chain (Higham, Lemma 3.1), so counting a step twice
// only loosens the bound; leaving one out is what makes a test fail on another machine.
struct ErrorModel {
  int64_t terms = 0;
  int64_t computed = 0;
  int64_t stored = 0;
  double bound(DType dtype, double magnitude) const;
  // The same, element by element, for a tensor of magnitudes (fp64 result).
  Tensor bound(DType dtype, const Tensor& magnitude) const;
  // The bound as a tolerance for expect_values and expect_close, which allow tol * (1 + |expected|):
  // right where every rounding is of a term no bigger than 1 + |expected| (hand-computed values of
  // a few operations, results that do not cancel, O(1) data), as bound(dtype, 1 + |expected|) is.
  double tolerance(DType dtype) const { return bound(dtype, 1.0); }
};

// Roundings of one optimizer step on one element in its compute precision (kernels/functors.h),
// for ErrorModel::computed. SGD (sgd_update): lr, momentum, dampening and weight decay rounded to
// the compute type, and 10 operations with weight decay, momentum and nesterov. Adam and AdamW
// (adam_update): 9 per-step constants (betas, 1 - betas, eps, decay, l2, the bias corrections:
// computed in double, so each is one rounding to f32, its double arithmetic far inside gamma's
// n^2 u^2 slack) and 16 operations (decay, l2, both moments, sqrt, the divisions, the update).
// Each moves p by at most a unit of |p| or of the step's update (its terms in absolute value).
inline constexpr int64_t kSgdStepRoundings = 14;
inline constexpr int64_t kAdamStepRoundings = 25;

// A sum of `terms` products of `dtype` data, element by element: gamma(terms) in the
// accumulation precision times the magnitude, plus, where the result is stored narrower than it
// was summed (f16), its own rounding: u of the dtype times the magnitude (>= |result|), and its
// underflow.
Tensor sum_error_bound(int64_t terms, DType dtype, const Tensor& magnitude);
std::vector<double> sum_error_bound(int64_t terms, DType dtype, const std::vector<double>& magnitude);

// How far the mean over each channel of training-mode batch_norm(x) (no affine, or weight 1 and
// bias 0) may be from 0, per channel [C], x [N, C, ...] of any floating dtype. In real arithmetic
// it is 0 whatever the statistics' own errors: mean((x - mu') invstd') = (mean(x) - mu') invstd',
// so only the computed mean's error mu' - mu counts (the variance's cancels), with the apply's
// roundings and the check's own mean of M = N * (H * W...) values. With Q = invstd (mean|x| + max|x|):
//   the mean:   gamma(M + 1) mean|x - K| (the kernel shifts by a value K), rounded to f32, times invstd
//   the apply:  y = x * scale + shift, both rounded to f32, the product and the sum: 4 u of Q
//   the check:  gamma(M) mean|y| <= gamma(M) Q
// gamma(2M + 8) Q to first order, and two roundings to a narrower dtype (y, and the mean) with
// their underflow.
Tensor batch_norm_mean_bound(const Tensor& x, double eps = 1e-5);

// max(a, b) element by element, for two magnitudes of one shape (fp64 result).
Tensor elementwise_max(const Tensor& a, const Tensor& b);

// |actual - expected| <= bound, element by element (NaN matches NaN, an infinity the same
// infinity). A failure names the op, the worst element (largest error over bound), both values,
// the bound and the ratio.
void expect_within(const Tensor& actual, const Tensor& expected, const Tensor& bound, const std::string& op);
void expect_within(const Tensor& actual, const std::vector<double>& expected, const std::vector<double>& bound,
                   const std::string& op);

}  // namespace ember::test
