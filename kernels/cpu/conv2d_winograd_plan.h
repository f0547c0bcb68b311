#pragma once
// How Winograd F(m x m, 3x3) (kernels/cpu/conv2d_winograd.h) cuts a batch, shared by its forward
// (conv2d_winograd.cpp) and its weight gradient (conv2d_winograd_weight_grad.cpp), m = 2 or 4:
//
//   const WinogradPlan p = winograd_plan(g, 4);
//   for_each_group(p, g.batch, [&](int64_t chunk, int64_t first, int64_t count, bool chunk_starts) { ... });
//
// A column of the (m + 2)^2 tap GEMMs is one (m + 2) x (m + 2) tile of one image. In
// for_each_group, each OpenMP thread (chunk, one scratch each) takes a contiguous range of
// images, as even as the batch allows, and runs them in groups of up to `group` images, the
// tiles of a group making one GEMM: the weight gradient's way, whose threads each sum their own
// images, so the split must not depend on timing. (Cutting the batch into groups first and
// dealing those out left one thread a whole group more where the groups did not divide evenly:
// ResNet-20's 7x7 layers, 5 groups of 12 images and one of 4, ran 36 images on one thread
// against 28 on the other; for_each_group_as_threads_free, the forward's way, cuts as many groups
// as a multiple of the threads.)
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "kernels/conv_geometry.h"
#include "kernels/cpu/parallel.h"

namespace ember::kernels::cpu {

// Tiles per GEMM: wide enough for the GEMM kernel's panels.
inline constexpr int64_t kWinogradColumnsWanted = 192;
// A tile's 16 values go to 16 tap blocks; were the blocks a multiple of 4 KiB apart (64
// channels x 192 columns of f32 is 48 KiB) all 16 stores would fall in one L1 set and evict
// each other (ResNet-20's 7x7 layer ran 3x slower). 16 elements between blocks spread them.
// The skew also takes a vector step's overrun past the last block's end (7 floats).
inline constexpr int64_t kWinogradTapSkew = 16;

struct WinogradPlan {
  int64_t tile;                     // m: outputs per tile side (2 or 4)
  int64_t taps;                     // (m + 2)^2
  int64_t tiles_h, tiles_w, tiles;  // per image
  int64_t group;                    // images per GEMM, at most
  int64_t chunks;                   // thread chunks (one scratch each)
  int64_t columns;                  // tiles * group
  int64_t padded_h, padded_w;       // an input plane with its padding, covering every tile
};

inline WinogradPlan winograd_plan(const Conv2dGeometry& g, int64_t tile = 2,
                                  int64_t columns_wanted = kWinogradColumnsWanted) {
  WinogradPlan p{};
  p.tile = tile;
  p.taps = (tile + 2) * (tile + 2);
  p.tiles_h = (g.out_h + tile - 1) / tile;
  p.tiles_w = (g.out_w + tile - 1) / tile;
  p.tiles = p.tiles_h * p.tiles_w;
  p.group = std::clamp<int64_t>((columns_wanted + p.tiles - 1) / p.tiles, 1, g.batch);
  p.chunks = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g.batch));
  p.columns = p.tiles * p.group;
  p.padded_h = tile * p.tiles_h + 2;
  p.padded_w = tile * p.tiles_w + 2;
  return p;
}

// Calls fn(chunk, first, count, chunk_starts) for each chunk's groups of images [first, first +
// count), in order (a chunk's last group may be short; chunk_starts on its first); the chunks
// run on one OpenMP team.
template <class Fn>
void for_each_group(const WinogradPlan& p, int64_t batch, const Fn& fn) {
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      const int64_t begin = batch * chunk / p.chunks, end = batch * (chunk + 1) / p.chunks;
      for (int64_t first = begin; first < end; first += p.group)
        fn(chunk, first, std::min(p.group, end - first), first == begin);
    }
  });
}

// Calls fn(chunk, first, count) for every group of the batch cut into groups of at most
// `group` images, as many groups as a multiple of the threads (so that threads of one speed
// take as many) and as even as that allows, dealt to the threads as each comes free (chunk: the
// thread's scratch). Only for work whose every image comes out the same whichever thread runs
// it (the forward), so the timing never moves the result; under ember's GEMM the cut does not
// either (a product's columns are independent sums; OpenBLAS's depend on its width). A thread
// the host slows takes fewer groups, where a fixed split leaves the other waiting for it (on a
// 2-core VM, 5-24% of the main thread's samples waited at the ends of the forward's and weight
// gradient's regions).
template <class Fn>
void for_each_group_as_threads_free(const WinogradPlan& p, int64_t batch, const Fn& fn) {
  const int64_t wanted = (batch + p.group - 1) / p.group;
  const int64_t groups = std::min(batch, (wanted + p.chunks - 1) / p.chunks * p.chunks);
  std::atomic<int64_t> next{0};
  parallel_for(p.chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk)
      for (int64_t i = next.fetch_add(1); i < groups; i = next.fetch_add(1)) {
        const int64_t first = batch * i / groups;
        fn(chunk, first, batch * (i + 1) / groups - first);
      }
  });
}

}  // namespace ember::kernels::cpu
