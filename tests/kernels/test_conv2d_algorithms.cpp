// conv2d's algorithms beyond the reference: the direct convolution under every instruction set
// the CPU has, Winograd F(2x2, 3x3) and F(4x4, 3x3) within their own error bounds on the zoo's
// layers (tests/support/conv2d_reference.h has the fp64 references and bounds), and which of the
// two auto runs where.
#include <omp.h>

#include <vector>

#include "kernels/conv_geometry.h"
#include "kernels/cpu/conv2d_direct.h"
#include "kernels/cpu/conv2d_winograd.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "tests/support/conv2d_reference.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("the direct convolution matches fp64 formulas under every instruction set this CPU has", "[conv2d][direct]") {
  const std::vector<ConvCase> cases = {
      {3, 1, 28, 28, 6, 5, 5, 1, 2, 1},    // LeNet-5 conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5 conv2
      {2, 1, 28, 28, 32, 3, 3, 1, 1, 1},   // ConvNet conv1
      {2, 3, 5, 3, 17, 3, 3, 1, 1, 1},     // 17 channels: one past two tiles of 8
      {4, 2, 9, 8, 3, 3, 3, 1, 2, 2},      // dilation 2
      {1, 5, 6, 7, 1, 1, 1, 1, 0, 1},      // pointwise, one channel out
      {2, 2, 7, 9, 5, 2, 4, {1, 1}, {0, 2}, {2, 1}},  // rectangular kernel, per-axis padding and dilation
  };
  std::vector<kernels::cpu::CpuIsa> isas;
  for (kernels::cpu::CpuIsa isa : {kernels::cpu::CpuIsa::avx2, kernels::cpu::CpuIsa::avx512})
    if (isa <= kernels::cpu::cpu_isa_supported()) isas.push_back(isa);
  if (isas.empty()) WARN("this CPU has neither AVX2 nor AVX-512: the direct convolution does not run here");
  const kernels::CpuConvScope direct(kernels::CpuConvAlgorithm::direct);
  manual_seed(7);
  for (kernels::cpu::CpuIsa isa : isas)
    for (const ConvCase& k : cases) {
      const kernels::cpu::CpuIsaScope scope(isa);
      INFO("EMBER_CPU_ISA=" << kernels::cpu::cpu_isa_name(isa) << ", " << describe(k));
      const ConvInputs in = make_inputs(k, kFloat32);
      const Tensor x = in.x.clone().requires_grad_(), w = in.w.clone().requires_grad_(), b = in.b.clone().requires_grad_();
      const Tensor y = conv2d(x, w, b, k.stride, k.padding, k.dilation);
      const kernels::CpuConvAlgorithm direct_algorithm = kernels::CpuConvAlgorithm::direct;
      test::expect_within(y, reference_conv(k, in.x, in.w, in.b), forward_bound(k, direct_algorithm, kFloat32, in, true),
                          "direct forward");
      test::expect_within(conv2d(in.x, in.w, Tensor(), k.stride, k.padding, k.dilation),
                          reference_conv(k, in.x, in.w, Tensor()), forward_bound(k, direct_algorithm, kFloat32, in, false),
                          "direct forward without bias");
      const Tensor dy = randn(y.shape());
      y.backward(dy);
      const ConvGrads want = reference_grads(k, direct_algorithm, kFloat32, in.x, in.w, dy);
      test::expect_within(w.grad(), want.dw, want.dw_bound, "direct weight gradient");
    }
}

TEST_CASE("EMBER_CPU_ISA: an instruction set the CPU lacks is refused by name", "[conv2d][direct]") {
  using kernels::cpu::CpuIsa;
  CHECK(std::string(kernels::cpu::cpu_isa_name(kernels::cpu::cpu_isa())) != "");
  {
    const kernels::cpu::CpuIsaScope baseline(CpuIsa::baseline);  // always possible: the portable code
    const kernels::CpuConvScope direct(kernels::CpuConvAlgorithm::direct);
    const Tensor x = randn({2, 1, 6, 6}), w = randn({3, 1, 3, 3});
    CHECK_FALSE(kernels::cpu::direct_applies(kernels::conv2d_geometry(x.shape(), w.shape(), {}, "conv2d")));
    const ConvCase k{2, 1, 6, 6, 3, 3, 3, 1, 0, 1};
    test::expect_within(conv2d(x, w, Tensor()), reference_conv(k, x, w, Tensor()),
                        forward_bound(k, kernels::CpuConvAlgorithm::im2col, kFloat32, {x, w, Tensor()}, false),
                        "direct falls back to im2col");
  }
  CHECK(kernels::cpu::cpu_isa_from_string("auto") == kernels::cpu::cpu_isa_supported());
  CHECK(kernels::cpu::cpu_isa_from_string("baseline") == CpuIsa::baseline);
  CHECK_THROWS_WITH(kernels::cpu::cpu_isa_from_string("sse"),
                    Catch::Matchers::Contains("EMBER_CPU_ISA='sse'") && Catch::Matchers::Contains("avx2 or avx512"));
  if (kernels::cpu::cpu_isa_supported() < CpuIsa::avx512) {
    CHECK_THROWS_WITH(kernels::cpu::set_cpu_isa(CpuIsa::avx512),
                      Catch::Matchers::Contains("avx512") && Catch::Matchers::Contains("supports at most"));
    CHECK_THROWS_WITH(kernels::cpu::cpu_isa_from_string("avx512"), Catch::Matchers::Contains("supports at most"));
  }
}

// The error bounds of conv2d_winograd.h on the zoo's 3x3 layers (ConvNet's and ResNet-20's
// widest), forward (F(2x2) and F(4x4)) and weight gradient against fp64: within gamma(C + 12)
// (F(4x4): gamma(C + 22); the weight gradient gamma(N tiles + 12), F(4x4) + 23) of Winograd's own magnitudes
// (tests/support/winograd_magnitude.h). The bound holds for any rounding; how much of it the
// rounding uses is printed with -s.
TEST_CASE("Winograd F(2x2, 3x3) and F(4x4, 3x3) hold their error bounds on the zoo's 3x3 layers", "[conv2d][winograd]") {
  manual_seed(6);
  const std::vector<ConvCase> layers = {
      {2, 16, 28, 28, 16, 3, 3, 1, 1, 1},  // ResNet-20 stage 1
      {5, 16, 28, 28, 16, 3, 3, 1, 1, 1},  // the same, in groups of one or two images: a thread's dU summed over several
      {2, 32, 28, 28, 32, 3, 3, 1, 1, 1},  // ConvNet conv2
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1},  // ConvNet conv3
      {2, 64, 14, 14, 64, 3, 3, 1, 1, 1},  // ConvNet conv4
      {2, 64, 7, 7, 64, 3, 3, 1, 1, 1},    // ResNet-20 stage 3
      {2, 17, 9, 9, 19, 3, 3, 1, 1, 1},    // 17 x 19 kernels: not whole vectors of them
      // F(4x4)'s forward in groups of 48 tiles, not 96, where a group's V and M would pass
      // 512 KiB (conv2d_winograd_steps.h): 12 images of four tiles a group, the last group short
      {13, 32, 7, 7, 32, 3, 3, 1, 1, 1},
  };
  for (const kernels::CpuConvAlgorithm winograd :
       {kernels::CpuConvAlgorithm::winograd, kernels::CpuConvAlgorithm::winograd4, kernels::CpuConvAlgorithm::automatic})
  for (const ConvCase& k : layers) {
    const kernels::CpuConvScope scope(winograd);
    INFO(describe(k) << ", EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(winograd));
    const ConvInputs in = make_inputs(k, kFloat32);
    const Tensor w = in.w.clone().requires_grad_();
    const Tensor y = conv2d(in.x, w, in.b, k.stride, k.padding);
    test::expect_within(y, reference_conv(k, in.x, in.w, in.b), forward_bound(k, winograd, kFloat32, in, true), "Winograd forward");
    const Tensor dy = randn(y.shape());
    y.backward(dy);
    const ConvGrads want = reference_grads(k, winograd, kFloat32, in.x, in.w, dy);
    test::expect_within(w.grad(), want.dw, want.dw_bound, "Winograd weight gradient");
  }
}

// The forward deals its groups of images to the threads as each comes free
// (kernels/cpu/conv2d_winograd_plan.h): sound only while every image's output is the same bits
// whichever thread runs it. Under ember's GEMM it is the same whichever images share its group
// too, as the thread count (which changes the cut and the dealing) shows. (OpenBLAS's products
// depend on their width, so there the cut, fixed for a thread count, moves the last bits.)
TEST_CASE("Winograd's forward gives the same bits on 1, 2 and 3 threads", "[conv2d][winograd]") {
  manual_seed(7);
  const kernels::CpuGemmScope ember_gemm(kernels::CpuGemmProvider::ember);
  const int threads = omp_get_max_threads();
  for (const kernels::CpuConvAlgorithm winograd : {kernels::CpuConvAlgorithm::winograd, kernels::CpuConvAlgorithm::winograd4})
  for (const ConvCase& k : {ConvCase{13, 16, 28, 28, 16, 3, 3, 1, 1, 1}, ConvCase{29, 32, 7, 7, 32, 3, 3, 1, 1, 1}}) {
    const kernels::CpuConvScope scope(winograd);
    INFO(describe(k) << ", EMBER_CPU_CONV=" << kernels::cpu_conv_algorithm_name(winograd));
    const ConvInputs in = make_inputs(k, kFloat32);
    std::vector<std::vector<float>> outputs;
    for (const int count : {1, 2, 3}) {
      omp_set_num_threads(count);
      outputs.push_back(conv2d(in.x, in.w, in.b, k.stride, k.padding).to_vector<float>());
    }
    omp_set_num_threads(threads);
    CHECK(outputs[1] == outputs[0]);
    CHECK(outputs[2] == outputs[0]);
  }
}

// auto's Winograd tile (kernels/cpu/conv2d_winograd.h): F(4x4) where its rows of tiles fill at
// least seven of a vector's eight lanes (or two rows of four share one), F(2x2) on the other
// layers Winograd pays for; the weight gradient (channels in the vectors, not tiles) F(4x4) on all.
TEST_CASE("auto runs Winograd F(4x4) where its tiles fill the vectors and F(2x2) elsewhere", "[conv2d][winograd]") {
  const auto geometry = [](int64_t c, int64_t h, int64_t w, int64_t oc) {
    return kernels::conv2d_geometry(Shape{64, c, h, w}, Shape{oc, c, 3, 3}, kernels::Conv2dArgs{1, 1, 1}, "test");
  };
  struct Layer {
    const char* name;
    kernels::Conv2dGeometry g;
    bool f4;
  };
  for (const Layer& l : {Layer{"ResNet-20 stage 1 (28x28: seven tiles a row)", geometry(16, 28, 28, 16), true},
                         Layer{"ConvNet conv2 (28x28)", geometry(32, 28, 28, 32), true},
                         Layer{"ResNet-20 stage 2 (14x14: two rows of four tiles a vector)", geometry(32, 14, 14, 32), true},
                         Layer{"ConvNet conv4 (14x14)", geometry(64, 14, 14, 64), true},
                         Layer{"ResNet-20 stage 3 (7x7: two tiles a row)", geometry(64, 7, 7, 64), false},
                         Layer{"12x12 (three tiles a row)", geometry(16, 12, 12, 16), false},
                         Layer{"14x4 (one row of four tiles)", geometry(16, 4, 14, 16), false},
                         Layer{"56x56 (fourteen tiles a row, two vectors)", geometry(16, 56, 56, 16), true},
                         Layer{"ConvNet conv1 (one channel in: no Winograd)", geometry(1, 28, 28, 32), false}}) {
    INFO(l.name);
    CHECK(kernels::cpu::winograd4_pays(l.g) == l.f4);
    CHECK(kernels::cpu::winograd4_weight_grad_pays(l.g) == kernels::cpu::winograd_pays(l.g));
  }
}
