#pragma once
// Winograd F(4x4, 3x3)'s matrices (Lavin & Gray, arXiv:1509.09308; the points 0, 1, -1, 2, -2 and
// infinity), each applied to one column of values: a scalar or a vector of lanes (anything with
// + - and a scalar *). The forward (conv2d_winograd.cpp) runs U = G g G^T, V = B^T d B and
// Y = A^T M A; the weight gradient (conv2d_winograd_weight_grad.cpp) runs their adjoints,
// V = B^T d B again, dM = A dY A^T and dg = G^T dU G:
//
//   V x[6], h[6];  bt6(x, h);        // h = B^T x
//   T g[3], u[6];  g6(g[0], g[1], g[2], u);
//
// Internal to kernels/cpu.
namespace ember::kernels::cpu {

// G (6 x 3) applied to (x0, x1, x2): G's rows (1/4, 0, 0), -(1, 1, 1)/6, -(1, -1, 1)/6,
// (1/24, 1/12, 1/6), (1/24, -1/12, 1/6), (0, 0, 1).
template <class T>
void g6(T x0, T x1, T x2, T* out) {
  const T sixth = T(1) / T(6), a = x0 + x2, b = T(0.25) * x0 + x2;
  out[0] = T(0.25) * x0;
  out[1] = -sixth * (a + x1);
  out[2] = -sixth * (a - x1);
  out[3] = sixth * (b + T(0.5) * x1);
  out[4] = sixth * (b - T(0.5) * x1);
  out[5] = x2;
}

// G^T (3 x 6) applied to (u0..u5), G's adjoint: (1/4, -1/6, -1/6, 1/24, 1/24, 0),
// (0, -1/6, 1/6, 1/12, -1/12, 0), (0, -1/6, -1/6, 1/6, 1/6, 1).
// V is T, or a vector of T (S = T) taking the same steps lane by lane.
template <class V, class S = V>
void gt6(const V* u, V* out) {
  const S sixth = S(1) / S(6);
  const V s12 = u[1] + u[2], d12 = u[2] - u[1], s34 = u[3] + u[4], d34 = u[3] - u[4];
  out[0] = S(0.25) * u[0] + sixth * (S(0.25) * s34 - s12);
  out[1] = sixth * (d12 + S(0.5) * d34);
  out[2] = sixth * (s34 - s12) + u[5];
}

// B^T (6 x 6) applied to (x0..x5): the rows (4, 0, -5, 0, 1, 0), (0, -4, -4, 1, 1, 0),
// (0, 4, -4, -1, 1, 0), (0, -2, -1, 2, 1, 0), (0, 2, -1, -2, 1, 0), (0, 4, 0, -5, 0, 1).
template <class V>
inline void bt6(const V* x, V* o) {
  const V t1 = x[4] - 4 * x[2], t2 = x[3] - 4 * x[1], t3 = x[4] - x[2], t4 = 2 * (x[3] - x[1]);
  o[0] = 4 * x[0] - 5 * x[2] + x[4];
  o[1] = t1 + t2;
  o[2] = t1 - t2;
  o[3] = t3 + t4;
  o[4] = t3 - t4;
  o[5] = 4 * x[1] - 5 * x[3] + x[5];
}

// A^T (4 x 6) applied to (m0..m5): the rows (1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0),
// (0, 1, 1, 4, 4, 0), (0, 1, -1, 8, -8, 1).
template <class V>
inline void at6(const V* m, V* y) {
  const V s1 = m[1] + m[2], d1 = m[1] - m[2], s2 = m[3] + m[4], d2 = m[3] - m[4];
  y[0] = m[0] + s1 + s2;
  y[1] = d1 + 2 * d2;
  y[2] = s1 + 4 * s2;
  y[3] = d1 + 8 * d2 + m[5];
}

// A (6 x 4) applied to (y0..y3), A^T's adjoint: the rows (1, 0, 0, 0), (1, 1, 1, 1), (1, -1, 1, -1),
// (1, 2, 4, 8), (1, -2, 4, -8), (0, 0, 0, 1).
template <class V>
inline void a6(const V* y, V* m) {
  const V even = y[0] + y[2], odd = y[1] + y[3], even4 = y[0] + 4 * y[2], odd8 = 2 * y[1] + 8 * y[3];
  m[0] = y[0];
  m[1] = even + odd;
  m[2] = even - odd;
  m[3] = even4 + odd8;
  m[4] = even4 - odd8;
  m[5] = y[3];
}

}  // namespace ember::kernels::cpu
