#pragma once
// ResNet-20 pieces (docs/models.md): BasicBlock = conv3x3(stride) - BN - ReLU -
// conv3x3 - BN, plus the shortcut (identity, or a 1x1 projection conv + BN when
// the shape changes: the paper's option B), then ReLU.
//
//   auto block = std::make_shared<ember::models::BasicBlock>(16, 32, /*stride=*/2);   // [N,16,28,28] -> [N,32,14,14]
//   auto net = ember::models::make_resnet20(/*in_channels=*/1, /*classes=*/10);
#include <cstdint>
#include <memory>

#include "models/batch_norm.h"
#include "models/conv2d.h"
#include "models/sequential.h"

namespace ember::models {

// Conv2d(in, out, kernel, stride, padding, bias) in one call, as docs/models.md writes it.
inline std::shared_ptr<nn::Conv2d> conv_layer(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                                              int64_t padding = 0, bool bias = true) {
  return std::make_shared<nn::Conv2d>(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias));
}

class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride);
  const char* name() const override { return "BasicBlock"; }

 protected:
  Tensor forward_impl(const Tensor& x) override;

 private:
  std::shared_ptr<nn::Conv2d> conv1_, conv2_;
  std::shared_ptr<nn::BatchNorm2d> bn1_, bn2_;
  std::shared_ptr<nn::Sequential> shortcut_;  // null: identity
};

// stem, 3 stages of 3 blocks (16, 32, 64 channels), global average pool, Linear(64, classes).
std::shared_ptr<nn::Sequential> make_resnet20(int64_t in_channels, int64_t num_classes);

}  // namespace ember::models
