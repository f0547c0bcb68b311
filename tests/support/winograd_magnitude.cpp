#include "tests/support/winograd_magnitude.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/factories.h"

namespace ember::test {
namespace {

// |B^T| (n x n), |G| (n x 3), |A^T| (m x n) of F(m x m, 3x3), n = m + 2 (Lavin & Gray,
// arXiv:1509.09308; F(4x4) with the points 0, 1, -1, 2, -2 and infinity).
struct Transform {
  int m, n;
  double bt[6][6], g[6][3], at[4][6];
};

constexpr Transform kF2 = {2,
                           4,
                           {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}},
                           {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0, 0, 1}},
                           {{1, 1, 1, 0}, {0, 1, 1, 1}}};
constexpr Transform kF4 = {4,
                           6,
                           {{4, 0, 5, 0, 1, 0},
                            {0, 4, 4, 1, 1, 0},
                            {0, 4, 4, 1, 1, 0},
                            {0, 2, 1, 2, 1, 0},
                            {0, 2, 1, 2, 1, 0},
                            {0, 4, 0, 5, 0, 1}},
                           {{1.0 / 4, 0, 0},
                            {1.0 / 6, 1.0 / 6, 1.0 / 6},
                            {1.0 / 6, 1.0 / 6, 1.0 / 6},
                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                            {0, 0, 1}},
                           {{1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}}};

const Transform& transform_for(int64_t tile) {
  EMBER_CHECK(tile == 2 || tile == 4, "winograd magnitude: no F(" << tile << "x" << tile << ", 3x3)");
  return tile == 2 ? kF2 : kF4;
}

struct Planes {
  int64_t n, c, h, w;
  std::vector<double> v;
  double at(int64_t i, int64_t ch, int64_t y, int64_t x) const {  // 0 outside the plane (padding)
    if (y < 0 || y >= h || x < 0 || x >= w) return 0;
    return std::fabs(v[static_cast<size_t>(((i * c + ch) * h + y) * w + x)]);
  }
};

Planes planes_of(const Tensor& t) {
  EMBER_CHECK(t.dim() == 4, "winograd magnitude: expected a 4-D tensor, got " << t.shape());
  return {t.shape()[0], t.shape()[1], t.shape()[2], t.shape()[3], t.to_vector<double>()};
}

// |B^T| |d| |B| for the n x n input tile whose top-left input element is (y0, x0).
// Writes out[a * n + b].
void input_tile(const Transform& f, const Planes& x, int64_t n, int64_t c, int64_t y0, int64_t x0, double* out) {
  double d[6][6];
  for (int p = 0; p < f.n; ++p)
    for (int q = 0; q < f.n; ++q) d[p][q] = x.at(n, c, y0 + p, x0 + q);
  for (int a = 0; a < f.n; ++a)
    for (int b = 0; b < f.n; ++b) {
      double s = 0;
      for (int p = 0; p < f.n; ++p)
        for (int q = 0; q < f.n; ++q) s += f.bt[a][p] * f.bt[b][q] * d[p][q];
      out[a * f.n + b] = s;
    }
}

// |A| |dY| |A^T| for the m x m output-gradient tile whose top-left element is (y0, x0).
void output_grad_tile(const Transform& f, const Planes& dy, int64_t n, int64_t o, int64_t y0, int64_t x0, double* out) {
  for (int a = 0; a < f.n; ++a)
    for (int b = 0; b < f.n; ++b) {
      double s = 0;
      for (int i = 0; i < f.m; ++i)
        for (int j = 0; j < f.m; ++j) s += f.at[i][a] * f.at[j][b] * dy.at(n, o, y0 + i, x0 + j);
      out[a * f.n + b] = s;
    }
}

}  // namespace

Tensor winograd_forward_magnitude(const Tensor& x, const Tensor& w, const Tensor& bias, Size2 padding, int64_t tile) {
  const Transform& f = transform_for(tile);
  const int taps = f.n * f.n;
  const Planes in = planes_of(x), k = planes_of(w);
  EMBER_CHECK(k.h == 3 && k.w == 3 && k.c == in.c, "winograd magnitude: weight " << w.shape() << " for input " << x.shape());
  const int64_t oh = in.h + 2 * padding.h - 2, ow = in.w + 2 * padding.w - 2;
  const int64_t tiles_h = (oh + f.m - 1) / f.m, tiles_w = (ow + f.m - 1) / f.m;
  // |G| |g| |G^T| per (o, c).
  std::vector<double> u(static_cast<size_t>(k.n * k.c * taps));
  for (int64_t o = 0; o < k.n; ++o)
    for (int64_t c = 0; c < k.c; ++c)
      for (int a = 0; a < f.n; ++a)
        for (int b = 0; b < f.n; ++b) {
          double s = 0;
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) s += f.g[a][p] * f.g[b][q] * k.at(o, c, p, q);
          u[static_cast<size_t>((o * k.c + c) * taps + a * f.n + b)] = s;
        }
  const std::vector<double> b = bias.defined() ? bias.to_vector<double>() : std::vector<double>();
  std::vector<double> out(static_cast<size_t>(in.n * k.n * oh * ow));
  std::vector<double> v(static_cast<size_t>(in.c * taps));
  for (int64_t n = 0; n < in.n; ++n)
    for (int64_t ty = 0; ty < tiles_h; ++ty)
      for (int64_t tx = 0; tx < tiles_w; ++tx) {
        for (int64_t c = 0; c < in.c; ++c)
          input_tile(f, in, n, c, f.m * ty - padding.h, f.m * tx - padding.w, &v[static_cast<size_t>(c * taps)]);
        for (int64_t o = 0; o < k.n; ++o) {
          double m[36] = {};
          for (int64_t c = 0; c < in.c; ++c)
            for (int t = 0; t < taps; ++t)
              m[t] += u[static_cast<size_t>((o * k.c + c) * taps + t)] * v[static_cast<size_t>(c * taps + t)];
          for (int i = 0; i < f.m; ++i)
            for (int j = 0; j < f.m; ++j) {
              const int64_t y = f.m * ty + i, xx = f.m * tx + j;
              if (y >= oh || xx >= ow) continue;
              double s = b.empty() ? 0.0 : std::fabs(b[static_cast<size_t>(o)]);
              for (int a = 0; a < f.n; ++a)
                for (int bb = 0; bb < f.n; ++bb) s += f.at[i][a] * f.at[j][bb] * m[a * f.n + bb];
              out[static_cast<size_t>(((n * k.n + o) * oh + y) * ow + xx)] = s;
            }
        }
      }
  return from_vector<double>(out, Shape{in.n, k.n, oh, ow}, TensorOptions(DType::f64));
}

Tensor winograd_weight_grad_magnitude(const Tensor& x, const Tensor& dy, Size2 padding, int64_t tile) {
  const Transform& f = transform_for(tile);
  const int taps = f.n * f.n;
  const Planes in = planes_of(x), g = planes_of(dy);
  EMBER_CHECK(g.n == in.n && g.h == in.h + 2 * padding.h - 2 && g.w == in.w + 2 * padding.w - 2,
              "winograd magnitude: output gradient " << dy.shape() << " for input " << x.shape());
  const int64_t tiles_h = (g.h + f.m - 1) / f.m, tiles_w = (g.w + f.m - 1) / f.m;
  // sum over tiles of (|A| |dY| |A^T|) . (|B^T| |d| |B|), per (o, c), then |G^T| . |G|.
  std::vector<double> du(static_cast<size_t>(g.c * in.c * taps), 0.0);
  std::vector<double> v(static_cast<size_t>(in.c * taps)), p(static_cast<size_t>(g.c * taps));
  for (int64_t n = 0; n < in.n; ++n)
    for (int64_t ty = 0; ty < tiles_h; ++ty)
      for (int64_t tx = 0; tx < tiles_w; ++tx) {
        for (int64_t c = 0; c < in.c; ++c)
          input_tile(f, in, n, c, f.m * ty - padding.h, f.m * tx - padding.w, &v[static_cast<size_t>(c * taps)]);
        for (int64_t o = 0; o < g.c; ++o)
          output_grad_tile(f, g, n, o, f.m * ty, f.m * tx, &p[static_cast<size_t>(o * taps)]);
        for (int64_t o = 0; o < g.c; ++o)
          for (int64_t c = 0; c < in.c; ++c)
            for (int t = 0; t < taps; ++t)
              du[static_cast<size_t>((o * in.c + c) * taps + t)] +=
                  p[static_cast<size_t>(o * taps + t)] * v[static_cast<size_t>(c * taps + t)];
      }
  std::vector<double> out(static_cast<size_t>(g.c * in.c * 9));
  for (int64_t oc = 0; oc < g.c * in.c; ++oc)
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) {
        double s = 0;
        for (int a = 0; a < f.n; ++a)
          for (int b = 0; b < f.n; ++b) s += f.g[a][kh] * f.g[b][kw] * du[static_cast<size_t>(oc * taps + a * f.n + b)];
        out[static_cast<size_t>(oc * 9 + kh * 3 + kw)] = s;
      }
  return from_vector<double>(out, Shape{g.c, in.c, 3, 3}, TensorOptions(DType::f64));
}

Tensor winograd_input_grad_magnitude(const Tensor& dy, const Tensor& w, int64_t tile) {
  const Planes k = planes_of(w);
  std::vector<double> flipped(k.v.size());
  for (int64_t o = 0; o < k.n; ++o)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t t = 0; t < 9; ++t)
        flipped[static_cast<size_t>((c * k.n + o) * 9 + (8 - t))] = k.v[static_cast<size_t>((o * k.c + c) * 9 + t)];
  const Tensor w_flipped = from_vector<double>(flipped, Shape{k.c, k.n, 3, 3}, TensorOptions(DType::f64));
  return winograd_forward_magnitude(dy, w_flipped, Tensor(), Size2(1), tile);
}

}  // namespace ember::test
