#include <memory>
#include <string>

#include "autograd/ops.h"
#include "core/generator.h"
#include "kernels/factories.h"
#include "models/resnet.h"
#include "models/zoo.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

namespace {

// docs/models.md's counts (resnet20: worked out by hand there, stage by stage).
struct ZooCase {
  const char* name;
  int64_t parameters;
  int64_t buffer_elements;  // BatchNorm running statistics
};
const ZooCase kZoo[] = {{"mlp", 235146, 0}, {"lenet5", 61706, 0}, {"convnet", 468202, 384}, {"resnet20", 272186, 1568}};

int64_t buffer_elements(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& b : m.buffers()) n += b.numel();
  return n;
}

}  // namespace

TEST_CASE("zoo models map [2, 1, 28, 28] to [2, 10] with docs/models.md's parameter counts", "[zoo]") {
  manual_seed(0);
  for (const ZooCase& c : kZoo) {
    INFO(c.name);
    auto model = models::make_model(c.name, Shape{1, 28, 28}, 10);
    CHECK(model->num_parameters() == c.parameters);
    CHECK(buffer_elements(*model) == c.buffer_elements);
    const Tensor logits = model->forward(randn({2, 1, 28, 28}));
    CHECK(logits.shape() == Shape{2, 10});
  }
}

TEST_CASE("zoo models backpropagate into every parameter", "[zoo]") {
  manual_seed(1);
  for (const ZooCase& c : kZoo) {
    INFO(c.name);
    auto model = models::make_model(c.name, Shape{1, 28, 28}, 10);
    const Tensor labels = from_vector<int64_t>({3, 7}, Shape{2});
    Tensor loss = cross_entropy(model->forward(randn({2, 1, 28, 28})), labels);
    loss.backward();
    for (const auto& [name, p] : model->named_parameters()) {
      INFO(name);
      REQUIRE(p.grad().defined());
      CHECK(p.grad().shape() == p.shape());
      // Some gradient element is nonzero: the parameter is really on the loss's path.
      CHECK(sum(abs(p.grad())).item<float>() > 0.0f);
    }
  }
}

TEST_CASE("BasicBlock projects the shortcut only when the shape changes", "[zoo]") {
  manual_seed(2);
  models::BasicBlock same(16, 16, 1), down(16, 32, 2);
  CHECK(same.named_children().size() == 4);  // conv1, bn1, conv2, bn2: identity shortcut
  CHECK(down.named_children().size() == 5);  // + shortcut (1x1 conv, BN)
  CHECK(down.forward(randn({2, 16, 8, 8})).shape() == Shape{2, 32, 4, 4});
  CHECK(same.forward(randn({2, 16, 8, 8})).shape() == Shape{2, 16, 8, 8});
}

TEST_CASE("zoo rejects image models on flat inputs", "[zoo]") {
  for (const char* name : {"lenet5", "convnet", "resnet20"})
    expect_error_contains([&] { models::make_model(name, Shape{2}, 3); }, {name, "[C, H, W]"});
}
