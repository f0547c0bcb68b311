#pragma once
// im2col and its transpose for the CPU convolution's GEMM path (kernels/cpu/conv2d.cpp):
//
//   cols [C*KH*KW, OH*OW]: cols[(c, kh, kw)][(oh, ow)] = image[c][oh*sh + kh*dh - ph][ow*sw + kw*dw - pw]
//                          (zero where that lies in the padding)
//
//   std::vector<float> scratch(im2col_scratch(g), 0.0f);   // zeroed once, then reused per image
//   im2col(g, image, cols.data(), scratch.data());
//   col2im_add(g, dcols.data(), dimage);                   // dimage += every entry at its source
//
// im2col of a strided, padded convolution copies each image into zero-padded planes first (the
// scratch), so its rows are fixed-stride runs with no bounds to check; the rest need no scratch,
// and col2im_add never does (it adds each row's in-image entries only).
// conv_geometry.h's im2col_source states the same mapping per element.
#include <cstdint>

#include "kernels/conv_geometry.h"

namespace ember::kernels::cpu {

// Elements of scratch im2col needs for g (0: none, a null pointer will do).
// im2col only ever writes its interior, so zero it before the first image.
int64_t im2col_scratch(const Conv2dGeometry& g);

// One image [C, H, W] -> its column matrix [C*KH*KW, OH*OW]. T is float or double.
template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* cols, T* scratch);

// image [C, H, W] += the transpose of im2col applied to cols (entries in the padding are dropped).
template <class T>
void col2im_add(const Conv2dGeometry& g, const T* cols, T* image);

}  // namespace ember::kernels::cpu
