// CNN ops: conv2d, max/avg/global pooling, batch norm (training, eval, running statistics), dropout.
#include <sstream>

#include "core/generator.h"
#include "tests/ops/op_case.h"

namespace ember::test {
namespace {

struct ConvShape {
  Shape x, w;
  Size2 stride, padding, dilation;
};

// Strides 1/2, padding 0-2, dilation 1/2, odd and non-square sizes, batch 1-3, 1x1 kernels with
// and without the pointwise shortcut, more channels than one GEMM tile, and empty batches.
const std::vector<ConvShape> kConvs = {
    {{1, 1, 5, 5}, {1, 1, 3, 3}, 1, 0, 1},          {{3, 2, 7, 5}, {4, 2, 3, 3}, 1, 1, 1},
    {{3, 3, 7, 5}, {2, 3, 3, 2}, 2, 1, 1},          {{2, 2, 9, 8}, {3, 2, 3, 3}, 1, 2, 2},
    {{3, 4, 6, 6}, {5, 4, 1, 1}, 1, 0, 1},          {{2, 3, 6, 7}, {2, 3, 1, 1}, 2, 0, 1},
    {{1, 2, 8, 8}, {3, 2, 5, 5}, 1, 2, 1},          {{3, 2, 7, 9}, {3, 2, 3, 3}, {2, 1}, {0, 2}, {1, 2}},
    {{2, 16, 12, 12}, {70, 16, 3, 3}, 1, 1, 1},     {{0, 3, 5, 5}, {2, 3, 3, 3}, 1, 1, 1},
    {{2, 2, 5, 5}, {0, 2, 3, 3}, 1, 1, 1},  // no output channels
    {{2, 0, 5, 5}, {3, 0, 3, 3}, 1, 1, 1},  // no input channels: y is the bias, the weight gradient empty
};

struct PoolShape {
  Shape x;
  Size2 kernel, stride, padding;
};
const std::vector<PoolShape> kPools = {
    {{2, 3, 8, 8}, 2, 2, 0}, {{2, 3, 9, 7}, 3, 2, 1}, {{1, 2, 6, 5}, 3, 1, 1},  // 3x3/1: overlapping windows
    {{2, 2, 7, 9}, {2, 3}, {1, 2}, {1, 1}}, {{1, 1, 1, 1}, 1, 1, 0}, {{0, 3, 4, 4}, 2, 2, 0},
};

std::string geometry(const Size2& stride, const Size2& padding) {
  std::ostringstream s;
  s << " stride " << stride << " padding " << padding;
  return s.str();
}

}  // namespace

std::vector<OpCase> cnn_cases() {
  std::vector<OpCase> cases;
  // Conv sums up to ~600 products in another order than fp64 (cuDNN may pick FFT or Winograd,
  // whose transforms round more): 1e-4 in f32; f16 outputs round after fp32 accumulation.
  for (const ConvShape& c : kConvs) {
    const std::string name = "conv2d x " + c.x.str() + " w " + c.w.str() + geometry(c.stride, c.padding);
    cases.push_back(OpCase("cnn", name, {In(c.x), In(c.w), In({c.w.sizes()[0]})},
                           [c](const Inputs& in) { return conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation); })
                        .tol(1e-4, 5e-3));
  }
  // 64 channels x 3x3 taps x 64x64 pixels is 9.4 MB of f32 columns per image: 8 images exceed
  // the custom CUDA provider's 64 MiB column budget, so it runs two chunks and accumulates the
  // weight gradient across them. Each weight-gradient entry sums 8 x 64 x 64 = 32768 products in
  // f32, whose rounding grows with the sum's length: 1.05e-4 against fp64 was measured on an
  // AVX-512 machine (Eigen's wider panels), so the tolerance is 3e-4 rather than the usual 1e-4.
  cases.push_back(OpCase("cnn", "conv2d over more images than one column chunk x [8, 64, 64, 64] w [16, 64, 3, 3]",
                         {In({8, 64, 64, 64}), In({16, 64, 3, 3}), In({16})},
                         [](const Inputs& in) { return conv2d(in[0], in[1], in[2], 1, 1); })
                      .only({DType::f32})
                      .tol(3e-4, 5e-3));
  cases.push_back(OpCase("cnn", "conv2d without bias of rows 1.. of [3, 2, 6, 6]", {RowsOf({2, 2, 6, 6}), In({3, 2, 3, 3})},
                         [](const Inputs& in) { return conv2d(in[0], in[1], Tensor(), 1, 1); })
                      .tol(1e-4, 5e-3));

  for (const PoolShape& p : kPools) {
    const std::string g = " " + p.x.str() + " kernel " + [&] {
      std::ostringstream s;
      s << p.kernel;
      return s.str();
    }() + geometry(p.stride, p.padding);
    cases.push_back(OpCase("cnn", "max_pool2d" + g, {In(p.x)},
                           [p](const Inputs& in) { return max_pool2d(in[0], p.kernel, p.stride, p.padding); }));
    cases.push_back(OpCase("cnn", "avg_pool2d" + g, {In(p.x)},
                           [p](const Inputs& in) { return avg_pool2d(in[0], p.kernel, p.stride, p.padding); }));
    // Whole numbers in [0, 200) repeat inside windows: the first maximum must take the gradient.
    cases.push_back(OpCase("cnn", "max_pool2d with ties" + g, {In(p.x, Values::integers)},
                           [p](const Inputs& in) { return max_pool2d(mul(in[0], 0.05), p.kernel, p.stride, p.padding); })
                        .no_gradcheck());
  }
  // NaN wins a window (the first NaN takes the gradient), as in PyTorch: log of negatives.
  cases.push_back(OpCase("cnn", "max_pool2d of NaNs [2, 2, 6, 6]", {In({2, 2, 6, 6})},
                         [](const Inputs& in) { return max_pool2d(log(in[0]), 2); })
                      .no_gradcheck());
  cases.push_back(OpCase("cnn", "global_avg_pool2d [3, 4, 5, 6]", {In({3, 4, 5, 6})},
                         [](const Inputs& in) { return global_avg_pool2d(in[0]); }));

  // Batch norm: training (batch statistics), eval (running ones), and the running statistics
  // themselves, which are updated in place in double whatever their dtype.
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{5, 6}, Shape{2, 2, 1, 1}, Shape{64, 16, 9, 9}}) {
    const int64_t c = shape.sizes()[1];
    const bool big = shape.numel() > 10000;
    cases.push_back(OpCase("cnn", "batch_norm training " + shape.str(), {In(shape), In({c}), In({c})},
                           [c](const Inputs& in) {
                             const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                             return batch_norm(in[0], in[1], in[2], zeros({c}, o), ones({c}, o), true);
                           })
                        .tol(big ? 1e-4 : 1e-5, 5e-3));
    cases.push_back(OpCase("cnn", "batch_norm eval " + shape.str(),
                           {In(shape), In({c}), In({c}), Constant({c}), Constant({c}, Values::positive)},
                           [](const Inputs& in) { return batch_norm(in[0], in[1], in[2], in[3], in[4], false); }));
    for (int which : {0, 1}) {
      cases.push_back(OpCase("cnn", std::string(which == 0 ? "running_mean" : "running_var") + " after batch_norm " +
                                        shape.str(),
                             {In(shape)},
                             [c, which](const Inputs& in) {
                               const TensorOptions o = TensorOptions(in[0].dtype()).device(in[0].device());
                               const Tensor rm = zeros({c}, o), rv = ones({c}, o);
                               batch_norm(in[0].detach(), Tensor(), Tensor(), rm, rv, true, 0.3);
                               return which == 0 ? rm : rv;
                             })
                          .tol(1e-5, 2e-3)
                          .no_backward());
    }
  }
  cases.push_back(OpCase("cnn", "batch_norm training without affine, rows 1.. of [5, 3, 4, 4]", {RowsOf({4, 3, 4, 4})},
                         [](const Inputs& in) {
                           return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true);
                         }));

  // Dropout draws its mask from Philox at the generator's state: the same on every device.
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{8, 16}, Shape{1000003}}) {
    for (double p : {0.0, 0.3, 1.0}) {
      cases.push_back(OpCase("cnn", "dropout p=" + std::to_string(p).substr(0, 3) + " " + shape.str(), {In(shape)},
                             [p](const Inputs& in) {
                               manual_seed(77);
                               return dropout(in[0], p, true);
                             }));
    }
  }
  // A dropped inf or NaN gives NaN (x * 0), as in PyTorch: x / 0 is +-inf.
  cases.push_back(OpCase("cnn", "dropout of infinities [64]", {In({64})},
                         [](const Inputs& in) {
                           manual_seed(78);
                           return dropout(div(in[0], sub(in[0], in[0])), 0.5, true);
                         })
                      .no_backward());
  return cases;
}

}  // namespace ember::test
