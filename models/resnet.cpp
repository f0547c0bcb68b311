#include "models/resnet.h"

#include "autograd/ops.h"
#include "models/activation.h"
#include "models/flatten.h"
#include "models/linear.h"
#include "models/pooling.h"

namespace ember::models {

BasicBlock::BasicBlock(int64_t in, int64_t out, int64_t stride) {
  conv1_ = register_module("conv1", conv_layer(in, out, 3, stride, 1, false));
  bn1_ = register_module("bn1", std::make_shared<nn::BatchNorm2d>(out));
  conv2_ = register_module("conv2", conv_layer(out, out, 3, 1, 1, false));
  bn2_ = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
  if (stride != 1 || in != out) {
    shortcut_ = register_module("shortcut", std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
                                                conv_layer(in, out, 1, stride, 0, false),
                                                std::make_shared<nn::BatchNorm2d>(out)}));
  }
}

Tensor BasicBlock::forward_impl(const Tensor& x) {
  Tensor h = bn1_->forward_relu(conv1_->forward(x));
  // batch norm, the shortcut's add and the ReLU in one pass (models/batch_norm.h)
  return bn2_->forward_add_relu(conv2_->forward(h), shortcut_ ? shortcut_->forward(x) : x);
}

std::shared_ptr<nn::Sequential> make_resnet20(int64_t in_channels, int64_t num_classes) {
  auto net = std::make_shared<nn::Sequential>();
  net->push_back(conv_layer(in_channels, 16, 3, 1, 1, false));
  net->push_back(std::make_shared<nn::BatchNorm2d>(16));
  net->push_back(std::make_shared<nn::ReLU>());
  int64_t channels = 16;
  for (const int64_t width : {16, 32, 64}) {
    for (int i = 0; i < 3; ++i) {
      const int64_t stride = (i == 0 && width != 16) ? 2 : 1;
      net->push_back(std::make_shared<BasicBlock>(channels, width, stride));
      channels = width;
    }
  }
  net->push_back(std::make_shared<nn::AdaptiveAvgPool2d>(1));
  net->push_back(std::make_shared<nn::Flatten>());
  net->push_back(std::make_shared<nn::Linear>(64, num_classes));
  return net;
}

}  // namespace ember::models
