#pragma once
// The register-tiled inner loops of the direct convolution (kernels/cpu/conv2d_direct.h), one
// copy per instruction set: conv2d_direct_avx2.cpp and conv2d_direct_avx512.cpp compile
// conv2d_direct_tiles.inc with their own -m flags, and conv2d_direct.cpp calls the one
// cpu_isa() names. This header is all they share, so it includes nothing a flag could change.
//
// Both loops read the input as a "shifted" matrix: with the image zero-padded into planes of
// Hp x Wp and outputs computed at every column of a padded row ("wide" pixels p = oh * Wp + ow,
// of which ow < OW are real), tap k = (c, kh, kw) of wide pixel p reads input[offset[k] + p],
// offset[k] = (c * Hp + kh * dh) * Wp + kw * dw. Row k of that matrix is a contiguous run, so
// the micro-kernels load it straight from the image and no im2col matrix is written.
#include <cstdint>

namespace ember::kernels::cpu {

// out[oc][p] = sum_k weights[k][oc] * input[offset[k] + p] for oc < oc_padded, p < pixels.
struct DirectForwardTiles {
  const float* input;      // padded planes; readable to offset[k] + pixels for every k
  const float* weights;    // [taps][oc_padded], zero beyond the real output channels
  const int64_t* offsets;  // [taps]
  int64_t taps;
  int64_t rows, pixel_block;        // the tile: DirectTileShape's for these output channels
  int64_t oc_padded, pixels;        // multiples of rows and of pixel_block
  float* out;                       // [oc_padded][pixels]
};

// acc[oc][k][lane] += sum over p = lane, lane + L, ... of grad[oc][p] * input[offset[k] + p]
// (L lanes): the weight gradient's sums, kept as vectors across images and reduced at the end.
struct DirectWeightGradTiles {
  const float* input;      // as above
  const float* grad;       // [oc_padded][pixels], zero at the pixels that are not real outputs
  const int64_t* offsets;  // [taps_padded]
  int64_t taps_padded, oc_padded, pixels;  // multiples of tap_block, grad_rows and lanes
  float* acc;                              // [oc_padded][taps_padded][lanes]
};

// The tile each instruction set's loops work in.
struct DirectTileShape {
  int64_t lanes;        // floats per vector
  int64_t rows;         // output channels per forward tile (also per weight-gradient tile)
  int64_t pixel_block;  // wide pixels per forward tile
  int64_t grad_rows, tap_block;  // weight-gradient tile: output channels x taps
};

DirectTileShape direct_tile_shape_avx2(int64_t out_channels);
void direct_forward_avx2(const DirectForwardTiles& t);
void direct_weight_grad_avx2(const DirectWeightGradTiles& t);

DirectTileShape direct_tile_shape_avx512(int64_t out_channels);
void direct_forward_avx512(const DirectForwardTiles& t);
void direct_weight_grad_avx512(const DirectWeightGradTiles& t);

}  // namespace ember::kernels::cpu
