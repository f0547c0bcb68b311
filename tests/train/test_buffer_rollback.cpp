// train::BufferRollback: a forward's update of BatchNorm's running statistics is undone unless
// the rollback is told to keep it; a model without buffers costs nothing.
#include <vector>

#include "memory/memory.h"
#include "models/batch_norm.h"
#include "models/zoo.h"
#include "tests/support/expect.h"
#include "train/buffer_rollback.h"

using namespace ember;

namespace {

std::vector<std::vector<float>> buffer_values(const nn::Module& model) {
  std::vector<std::vector<float>> values;
  for (const Tensor& b : model.buffers()) values.push_back(b.to_vector<float>());
  return values;
}

}  // namespace

TEST_CASE("BufferRollback puts the running statistics back unless kept", "[trainer][rollback]") {
  nn::BatchNorm2d bn(3);
  const Tensor x = randn({4, 3, 5, 5});
  const auto before = buffer_values(bn);
  {
    train::BufferRollback rollback(bn);
    bn.forward(x);
    CHECK(buffer_values(bn) != before);  // the forward moved them
  }
  CHECK(buffer_values(bn) == before);
  std::vector<std::vector<float>> updated;
  {
    train::BufferRollback rollback(bn);
    bn.forward(x);
    updated = buffer_values(bn);
    rollback.keep();
  }
  CHECK(buffer_values(bn) == updated);
  CHECK(updated != before);
}

TEST_CASE("BufferRollback of a model without buffers allocates nothing", "[trainer][rollback]") {
  auto lenet = models::make_model("lenet5", Shape{1, 28, 28}, 10);
  const int64_t requests = memory_stats(kCPU).allocated_bytes.allocated;
  train::BufferRollback rollback(*lenet);
  CHECK(memory_stats(kCPU).allocated_bytes.allocated == requests);
}
