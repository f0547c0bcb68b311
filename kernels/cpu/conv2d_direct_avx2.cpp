// The direct convolution's tiles with AVX2 + FMA (8 floats per vector, 16 registers): forward
// tiles of 6 channels x 2 vectors or 4 x 3 (12 accumulators), weight-gradient tiles of 3
// channels x 4 taps. Compiled with -mavx2 -mfma -mno-avx512f (kernels/CMakeLists.txt), so it
// is the code an AVX2-only machine runs even when built on an AVX-512 one.

#include "kernels/cpu/conv2d_direct_tiles.h"
#include "kernels/cpu/vec_avx2.h"

namespace ember::kernels::cpu {
namespace {

using Vec = Avx2Vec;

constexpr int kForward[][2] = {{6, 2}, {4, 3}};

}  // namespace

#include "kernels/cpu/conv2d_direct_tiles.inc"

DirectTileShape direct_tile_shape_avx2(int64_t out_channels) { return choose_shape(out_channels, kForward, 2, 3, 4); }

void direct_forward_avx2(const DirectForwardTiles& t) {
  if (t.rows == 6) forward_all<6, 2>(t);
  else forward_all<4, 3>(t);
}

void direct_weight_grad_avx2(const DirectWeightGradTiles& t) { weight_grad_all<3, 4>(t); }

}  // namespace ember::kernels::cpu
