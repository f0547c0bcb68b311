// The zoo's convolutions at batch 64 on the CPU: forward, input gradient and weight
// gradient, with each of ember's algorithms (kernels/providers.h: im2col, and Winograd and
// the direct convolution where the geometry and the CPU allow them) and with `auto`, the one
// training runs, and, in a build with the libtorch peer
// (-DEMBER_BENCH_PEERS=ON), libtorch's convolution on the same shapes, timed in the same
// iterations (ours, then libtorch's: interleaved, so drift hits both alike).
// Counters: GFLOPS (the direct method's 2*N*OC*C*KH*KW*OH*OW flops per second, whatever
// the algorithm does), peak_frac (of this CPU's fp32 peak, measured at start-up on as many
// threads: kernels/cpu/fp32_peak.h), product_peak_frac (the flops ember's GEMM products of the
// pass really performed, counted by kernels/cpu/gemm.h's cpu_product_flops, per second, as a
// fraction of that peak: what bench-train's "% of the fp32 peak" counts, the transforms' and
// copies' time included), and with libtorch torch_GFLOPS and ours/torch (above 1: ours
// is faster). Every benchmark runs 3 repetitions and reports their median.
//
//   bench_conv                                     # all threads, every layer, pass and algorithm
//   bench_conv --threads=1,2 --benchmark_filter=convnet
//   LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp build-peers/bench/bench_conv   # with libtorch
#include <benchmark/benchmark.h>

#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "bench/kernels/bench_harness.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/fp32_peak.h"
#include "kernels/cpu/gemm.h"
#include "kernels/factories.h"
#include "kernels/ops.h"
#include "kernels/providers.h"

#ifdef EMBER_BENCH_LIBTORCH
#include <malloc.h>
#include <torch/torch.h>
#endif

namespace {

using ember::Tensor;
using ember::kernels::CpuConvAlgorithm;
using namespace ember::bench;

constexpr int64_t kBatch = 64;

struct Layer {
  const char* name;
  int64_t c, hw, oc, k, stride, pad;
};

// Every distinct convolution of LeNet-5, ConvNet and ResNet-20 on 28x28x1 (docs/models.md).
const std::vector<Layer> kLayers = {
    {"lenet5.conv1_1x6_5x5_p2@28", 1, 28, 6, 5, 1, 2},
    {"lenet5.conv2_6x16_5x5@14", 6, 14, 16, 5, 1, 0},
    {"convnet.conv1_1x32_3x3@28", 1, 28, 32, 3, 1, 1},
    {"convnet.conv2_32x32_3x3@28", 32, 28, 32, 3, 1, 1},
    {"convnet.conv3_32x64_3x3@14", 32, 14, 64, 3, 1, 1},
    {"convnet.conv4_64x64_3x3@14", 64, 14, 64, 3, 1, 1},
    {"resnet20.stem_1x16_3x3@28", 1, 28, 16, 3, 1, 1},
    {"resnet20.s1_16x16_3x3@28", 16, 28, 16, 3, 1, 1},
    {"resnet20.s2_16x32_3x3_s2@28", 16, 28, 32, 3, 2, 1},
    {"resnet20.s2_32x32_3x3@14", 32, 14, 32, 3, 1, 1},
    {"resnet20.s3_32x64_3x3_s2@14", 32, 14, 64, 3, 2, 1},
    {"resnet20.s3_64x64_3x3@7", 64, 7, 64, 3, 1, 1},
    {"resnet20.shortcut_16x32_1x1_s2@28", 16, 28, 32, 1, 2, 0},
};

enum class Pass { forward, input_grad, weight_grad };
const char* pass_name(Pass p) {
  return p == Pass::forward ? "forward" : p == Pass::input_grad ? "input_grad" : "weight_grad";
}

ember::kernels::Conv2dArgs args_of(const Layer& l) { return {l.stride, l.pad, 1}; }
ember::kernels::Conv2dGeometry geometry_of(const Layer& l) {
  return ember::kernels::conv2d_geometry(ember::Shape{kBatch, l.c, l.hw, l.hw}, ember::Shape{l.oc, l.c, l.k, l.k},
                                         args_of(l), "bench_conv");
}
double flops_of(const Layer& l) {
  const auto g = geometry_of(l);
  return 2.0 * static_cast<double>(g.batch * g.out_channels * g.col_rows() * g.col_cols());
}

// One pass of ember's convolution with the algorithm in force.
std::function<void()> ember_pass(const Layer& l, Pass pass) {
  const auto g = geometry_of(l);
  const Tensor x = ember::randn({kBatch, l.c, l.hw, l.hw}), w = ember::randn({l.oc, l.c, l.k, l.k});
  const Tensor b = ember::randn({l.oc}), dy = ember::randn({kBatch, l.oc, g.out_h, g.out_w});
  const auto a = args_of(l);
  switch (pass) {
    case Pass::forward: return [=] { benchmark::DoNotOptimize(ember::kernels::conv2d(x, w, b, a).data_ptr()); };
    case Pass::input_grad:
      return [=] { benchmark::DoNotOptimize(ember::kernels::conv2d_backward_input(dy, w, x.shape(), a).data_ptr()); };
    case Pass::weight_grad:
      return [=] { benchmark::DoNotOptimize(ember::kernels::conv2d_backward_weight(x, dy, w.shape(), a).data_ptr()); };
  }
  return {};
}

#ifdef EMBER_BENCH_LIBTORCH
// libtorch's CPU tensors come from glibc's malloc, which by default maps an output past its
// (moving) mmap threshold afresh on every call and unmaps it on free: every pass then pays its
// page faults (the first layer of a run took libtorch's passes to 6-26 GFLOP/s against 260-280).
// Its best set-up keeps freed memory, as compare_cpu.sh's GLIBC_TUNABLES give libtorch_train.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

// The same pass in libtorch (its CPU convolution: oneDNN where it takes the shape).
std::function<void()> torch_pass(const Layer& l, Pass pass) {
  const auto g = geometry_of(l);
  const torch::Tensor x = torch::randn({kBatch, l.c, l.hw, l.hw}), w = torch::randn({l.oc, l.c, l.k, l.k});
  const torch::Tensor b = torch::randn({l.oc}), dy = torch::randn({kBatch, l.oc, g.out_h, g.out_w});
  const std::vector<int64_t> stride{l.stride, l.stride}, pad{l.pad, l.pad}, dilation{1, 1}, out_pad{0, 0};
  const std::array<bool, 3> mask = {pass == Pass::input_grad, pass == Pass::weight_grad, false};
  if (pass == Pass::forward)
    return [=] {
      torch::NoGradGuard no_grad;
      benchmark::DoNotOptimize(torch::conv2d(x, w, b, stride, pad).data_ptr());
    };
  return [=] {
    auto grads = at::convolution_backward(dy, x, w, std::vector<int64_t>{l.oc}, stride, pad, dilation, false, out_pad, 1,
                                          mask);
    benchmark::DoNotOptimize(std::get<0>(grads).defined() ? std::get<0>(grads).data_ptr() : std::get<1>(grads).data_ptr());
  };
}
#endif

void bench_layer(benchmark::State& state, const Layer& l, Pass pass, CpuConvAlgorithm algorithm, int threads,
                 double peak_gflops) {
  const OmpThreadsScope omp(threads);
  const ember::kernels::CpuConvScope scope(algorithm);
  const std::function<void()> ours = ember_pass(l, pass);
  const int64_t products_before = ember::kernels::cpu::cpu_product_flops();
  ours();  // warm-up (the caching allocator's blocks, BLAS buffers, pages), and the pass's product flops
  const double product_flops = static_cast<double>(ember::kernels::cpu::cpu_product_flops() - products_before);
  std::function<double()> peer;  // none without libtorch
#ifdef EMBER_BENCH_LIBTORCH
  at::set_num_threads(threads);
  const std::function<void()> theirs = torch_pass(l, pass);
  theirs();
  peer = [&] { return seconds_of(theirs); };
#endif
  const Timings t = time_interleaved(state, [&] { return seconds_of(ours); }, peer);
  const double flops = flops_of(l);
  set_flop_counters(state, flops, t.ours_s, peak_gflops);
  state.counters["peak_GFLOPS"] = peak_gflops;
  state.counters["product_peak_frac"] = gflops_of(state, product_flops, t.ours_s) / peak_gflops;
  if (peer) set_peer_counters(state, "torch", flops, t);  // torch_GFLOPS, ours/torch
}

void register_benchmarks(const std::vector<int>& thread_counts) {
  for (int threads : thread_counts) {
    const double peak = ember::kernels::cpu::measured_fp32_peak_gflops(threads);
    std::cout << "fp32 peak on " << threads << " thread(s), measured: " << static_cast<int>(peak) << " GFLOP/s\n";
    for (const Layer& l : kLayers)
      for (Pass pass : {Pass::forward, Pass::input_grad, Pass::weight_grad})
        for (CpuConvAlgorithm algorithm : {CpuConvAlgorithm::im2col, CpuConvAlgorithm::winograd, CpuConvAlgorithm::winograd4,
                                           CpuConvAlgorithm::direct, CpuConvAlgorithm::automatic}) {
          const bool winograd = algorithm == CpuConvAlgorithm::winograd || algorithm == CpuConvAlgorithm::winograd4;
          if (winograd && !ember::kernels::cpu::winograd_applies(geometry_of(l))) continue;
          if (algorithm == CpuConvAlgorithm::direct && !ember::kernels::cpu::direct_applies(geometry_of(l))) continue;
          const std::string name = std::string(l.name) + "/" + pass_name(pass) + "/" +
                                   ember::kernels::cpu_conv_algorithm_name(algorithm) +
                                   "/threads:" + std::to_string(threads);
          register_benchmark(
              name, [=](benchmark::State& s) { bench_layer(s, l, pass, algorithm, threads, peak); },
              benchmark::kMillisecond);
        }
  }
}

}  // namespace

int main(int argc, char** argv) {
#ifdef EMBER_BENCH_LIBTORCH
  keep_freed_memory();
#endif
  std::vector<int> threads;
  return bench_main(
      argc, argv, "bench_conv", [&](int* c, char** v) { threads = take_flags(c, v); },
      [&] { register_benchmarks(threads); });
}
