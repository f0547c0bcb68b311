// The direct convolution's tiles with AVX-512F (16 floats per vector, 32 registers): forward
// tiles of 8 channels x 3 vectors or 6 x 4 (24 accumulators), weight-gradient tiles of 4
// channels x 6 taps. Compiled with -mavx512f -mfma (kernels/CMakeLists.txt); called only
// when cpu_isa() is avx512.

#include "kernels/cpu/conv2d_direct_tiles.h"
#include "kernels/cpu/vec_avx512.h"

namespace ember::kernels::cpu {
namespace {

using Vec = Avx512Vec;

constexpr int kForward[][2] = {{8, 3}, {6, 4}};

}  // namespace

#include "kernels/cpu/conv2d_direct_tiles.inc"

DirectTileShape direct_tile_shape_avx512(int64_t out_channels) { return choose_shape(out_channels, kForward, 2, 4, 6); }

void direct_forward_avx512(const DirectForwardTiles& t) {
  if (t.rows == 8) forward_all<8, 3>(t);
  else forward_all<6, 4>(t);
}

void direct_weight_grad_avx512(const DirectWeightGradTiles& t) { weight_grad_all<4, 6>(t); }

}  // namespace ember::kernels::cpu
