#pragma once
// log and cos that give the same bits on the CPU and on a GPU, for random draws that
// manual_seed must make identical on every backend (core/philox.h's philox_normal):
//
//   double l = portable_log(0.3);      // log(0.3), to ~1e-16 relative
//   double c = portable_cos_2pi(0.3);  // cos(2 pi 0.3) for 0 <= u <= 1
//
// glibc's logf/cosf and CUDA's libdevice differ in the last bits, so a Box-Muller draw
// built on them differs between backends. These use only operations IEEE 754 rounds
// exactly one way on every target (+, -, *, /, sqrt, fma, and frexp/ldexp, which are exact),
// each multiply-add written as an explicit fma: a compiler may fuse a*b + c on one backend
// and not on another (GCC's -ffp-contract=fast, nvcc's --fmad=true), and an explicit fma
// leaves it nothing to fuse. Accuracy is far past what a float draw needs: the double result
// is within a few units in its last place, so rounding it to float almost always gives the
// correctly rounded float.
#include <math.h>

#include "core/hd.h"

namespace ember {

// log(x) for finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) for
// s = (m - 1) / (m + 1), |s| <= 0.1716, summed as 2 s (1 + s^2/3 + s^4/5 + ... + s^24/25);
// the first term left out is below 1e-19 of the sum.
EMBER_HD double portable_log(double x) {
  int e = 0;
  double m = ::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0x1.6a09e667f3bcdp-1) {  // sqrt(1/2)
    m = ::ldexp(m, 1);
    e -= 1;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double p = 0x1.47ae147ae147bp-5;  // 1/25
  p = ::fma(p, s2, 0x1.642c8590b2164p-5);  // 1/23
  p = ::fma(p, s2, 0x1.8618618618618p-5);  // 1/21
  p = ::fma(p, s2, 0x1.af286bca1af28p-5);  // 1/19
  p = ::fma(p, s2, 0x1.e1e1e1e1e1e1ep-5);  // 1/17
  p = ::fma(p, s2, 0x1.1111111111111p-4);  // 1/15
  p = ::fma(p, s2, 0x1.3b13b13b13b14p-4);  // 1/13
  p = ::fma(p, s2, 0x1.745d1745d1746p-4);  // 1/11
  p = ::fma(p, s2, 0x1.c71c71c71c71cp-4);  // 1/9
  p = ::fma(p, s2, 0x1.2492492492492p-3);  // 1/7
  p = ::fma(p, s2, 0x1.999999999999ap-3);  // 1/5
  p = ::fma(p, s2, 0x1.5555555555555p-2);  // 1/3
  const double log_m = ::fma(2.0 * s * s2, p, 2.0 * s);  // 2 s + 2 s^3 p
  return ::fma(static_cast<double>(e), 0x1.62e42fefa39efp-1, log_m);  // e ln 2 + log m
}

// cos(a) and sin(a) for |a| <= pi/4: Taylor series to a^20 and a^21 (the next terms are
// below 1e-23), in Horner form over a^2.
EMBER_HD double portable_cos_small(double a) {
  const double a2 = a * a;
  double p = 0x1.e542ba4020225p-62;  // 1/20!
  p = ::fma(p, a2, -0x1.6827863b97d97p-53);  // -1/18!
  p = ::fma(p, a2, 0x1.ae7f3e733b81fp-45);   // 1/16!
  p = ::fma(p, a2, -0x1.93974a8c07c9dp-37);  // -1/14!
  p = ::fma(p, a2, 0x1.1eed8eff8d898p-29);   // 1/12!
  p = ::fma(p, a2, -0x1.27e4fb7789f5cp-22);  // -1/10!
  p = ::fma(p, a2, 0x1.a01a01a01a01ap-16);   // 1/8!
  p = ::fma(p, a2, -0x1.6c16c16c16c17p-10);  // -1/6!
  p = ::fma(p, a2, 0x1.5555555555555p-5);    // 1/4!
  p = ::fma(p, a2, -0.5);                    // -1/2!
  return ::fma(p, a2, 1.0);
}

EMBER_HD double portable_sin_small(double a) {
  const double a2 = a * a;
  double p = 0x1.71b8ef6dcf572p-66;  // 1/21!
  p = ::fma(p, a2, -0x1.2f49b46814157p-57);  // -1/19!
  p = ::fma(p, a2, 0x1.952c77030ad4ap-49);   // 1/17!
  p = ::fma(p, a2, -0x1.ae7f3e733b81fp-41);  // -1/15!
  p = ::fma(p, a2, 0x1.6124613a86d09p-33);   // 1/13!
  p = ::fma(p, a2, -0x1.ae64567f544e4p-26);  // -1/11!
  p = ::fma(p, a2, 0x1.71de3a556c734p-19);   // 1/9!
  p = ::fma(p, a2, -0x1.a01a01a01a01ap-13);  // -1/7!
  p = ::fma(p, a2, 0x1.1111111111111p-7);    // 1/5!
  p = ::fma(p, a2, -0x1.5555555555555p-3);   // -1/3!
  return ::fma(p * a2, a, a);                // a + a^3 p
}

// cos(2 pi u) for 0 <= u <= 1. Each reduction below subtracts numbers within a factor of two of
// each other, which is exact (Sterbenz's lemma): the only rounded steps are the angle and the series.
EMBER_HD double portable_cos_2pi(double u) {
  constexpr double kTwoPi = 0x1.921fb54442d18p+2;
  if (u > 0.5) u = 1.0 - u;                               // cos(2 pi u) = cos(2 pi (1 - u)), u now in [0, 1/2]
  if (u <= 0.125) return portable_cos_small(kTwoPi * u);
  if (u <= 0.375) return portable_sin_small(kTwoPi * (0.25 - u));  // cos(2 pi u) = sin(2 pi (1/4 - u))
  return -portable_cos_small(kTwoPi * (0.5 - u));                   // cos(2 pi u) = -cos(2 pi (1/2 - u))
}

}  // namespace ember
