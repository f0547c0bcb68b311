#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "memory/memory.h"
#include "models/activation.h"
#include "models/functional.h"
#include "models/init.h"
#include "models/linear.h"
#include "models/sequential.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::test;

namespace {

// A module with its own parameter and buffers, a child and a grandchild (through the Sequential).
class Block : public nn::Module {
 public:
  Block() {
    scale_ = register_parameter("scale", ones({3}));
    register_buffer("steps", zeros({1}, kInt64));
    running_ = register_buffer("running", zeros({3}));
    body_ = register_module("body", std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
                                        std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>()}));
  }
  const char* name() const override { return "Block"; }
  const Tensor& scale() const { return scale_; }
  void add_bad_member(const std::string& n) { register_buffer(n, zeros({1})); }

 protected:
  Tensor forward_impl(const Tensor& x) override { return body_->forward(x) * scale_; }

 private:
  Tensor scale_;    // [3]
  Tensor running_;  // [3]
  std::shared_ptr<nn::Sequential> body_;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& entry : named) out.push_back(entry.first);
  return out;
}

std::shared_ptr<nn::Sequential> small_net() {
  return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(nn::LinearOptions(3, 4).bias(false))});
}

}  // namespace

TEST_CASE("named_parameters: dotted names in registration order, own tensors before children", "[module]") {
  auto net = small_net();
  CHECK(names_of(net->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight"});
  const std::vector<Tensor> params = net->parameters();
  REQUIRE(params.size() == 3);
  CHECK(params[0].shape() == Shape{3, 2});
  CHECK(params[1].shape() == Shape{3});
  CHECK(params[2].shape() == Shape{4, 3});
  CHECK(params[0].is_same(std::dynamic_pointer_cast<nn::Linear>((*net)[0])->weight()));
  for (const Tensor& p : params) CHECK(p.requires_grad());
  CHECK(net->num_parameters() == 3 * 2 + 3 + 4 * 3);
  CHECK(net->children().size() == 3);

  Block block;
  CHECK(names_of(block.named_parameters()) == std::vector<std::string>{"scale", "body.0.weight", "body.0.bias"});
  CHECK(names_of(block.named_buffers()) == std::vector<std::string>{"steps", "running"});
  CHECK(block.buffers().size() == 2);
  CHECK_FALSE(block.buffers()[1].requires_grad());
}

TEST_CASE("member names must be unique and without dots", "[module][errors]") {
  Block block;
  expect_error_contains([&] { block.add_bad_member("scale"); }, {"Block", "'scale'", "already registered"});
  expect_error_contains([&] { block.add_bad_member("a.b"); }, {"Block", "'a.b'"});
  expect_error_contains([&] { block.add_bad_member(""); }, {"Block", "invalid member name"});
}

TEST_CASE("train() and eval() reach every descendant", "[module]") {
  Block block;
  auto body = std::dynamic_pointer_cast<nn::Sequential>(block.children()[0]);
  REQUIRE(body);
  CHECK(block.is_training());
  block.eval();
  CHECK_FALSE(block.is_training());
  CHECK_FALSE(body->is_training());
  CHECK_FALSE((*body)[0]->is_training());
  CHECK_FALSE((*body)[1]->is_training());
  block.train();
  CHECK((*body)[1]->is_training());
  body->train(false);  // a subtree alone
  CHECK(block.is_training());
  CHECK_FALSE((*body)[0]->is_training());
}

TEST_CASE("to(dtype) converts parameters and floating buffers in place", "[module]") {
  Block block;
  const Tensor weight = block.named_parameters()[1].second;  // a handle taken before the move
  const std::vector<double> before = weight.to_vector<double>();
  Tensor x = randn({4, 2});
  sum(block.forward(x)).backward();
  REQUIRE(weight.grad().defined());
  const std::vector<double> grad_before = weight.grad().to_vector<double>();

  block.to(kFloat64);
  for (const Tensor& p : block.parameters()) {
    CHECK(p.dtype() == kFloat64);
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
  }
  CHECK(weight.dtype() == kFloat64);  // the same TensorImpl, converted
  CHECK(weight.is_same(block.named_parameters()[1].second));
  CHECK(weight.to_vector<double>() == before);  // f32 -> f64 is exact
  CHECK(weight.grad().dtype() == kFloat64);
  CHECK(weight.grad().to_vector<double>() == grad_before);
  CHECK(block.named_buffers()[0].second.dtype() == kInt64);  // integer buffers keep their dtype
  CHECK(block.named_buffers()[1].second.dtype() == kFloat64);

  // The module still computes, now in f64, and gradients reach the converted parameters.
  block.zero_grad();
  Tensor y = block.forward(x.to(kFloat64));
  CHECK(y.dtype() == kFloat64);
  sum(y).backward();
  CHECK(weight.grad().dtype() == kFloat64);
  expect_error_contains([&] { block.to(kInt64); }, {"Block", "floating"});
}

TEST_CASE("zero_grad drops or zeroes every parameter's gradient", "[module]") {
  auto net = small_net();
  Tensor x = randn({5, 2});
  sum(net->forward(x)).backward();
  for (const Tensor& p : net->parameters()) REQUIRE(p.grad().defined());

  net->zero_grad(false);
  for (const Tensor& p : net->parameters()) {
    REQUIRE(p.grad().defined());
    expect_close(p.grad(), zeros_like(p), 0, "zero_grad(false)");
  }
  net->zero_grad();
  for (const Tensor& p : net->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("parameters are counted as parameter bytes, forward outputs as activations", "[module][memory]") {
  const auto category_bytes = [](MemoryCategory c) {
    return memory_stats(kCPU).by_category[static_cast<size_t>(c)].current;
  };
  const int64_t params_before = category_bytes(MemoryCategory::parameter);
  auto fc = std::make_shared<nn::Linear>(64, 32);
  const int64_t param_bytes = (64 * 32 + 32) * 4;
  // Allocators round requests up (at most one 512-byte block each here), never down.
  const int64_t counted = category_bytes(MemoryCategory::parameter) - params_before;
  CHECK(counted >= param_bytes);
  CHECK(counted <= param_bytes + 2 * 512);

  Tensor x = randn({16, 64});
  const int64_t activations_before = category_bytes(MemoryCategory::activation);
  Tensor y = fc->forward(x);
  CHECK(category_bytes(MemoryCategory::activation) - activations_before >= static_cast<int64_t>(y.nbytes()));
}

TEST_CASE("Sequential: forward equals forward_range pieces, ranges are checked", "[module]") {
  auto net = small_net();
  Tensor x = randn({3, 2});
  const Tensor whole = net->forward(x);
  const Tensor pieces = net->forward_range(net->forward_range(x, 0, 2), 2, 3);
  expect_close(pieces, whole, 0, "forward_range");
  expect_close(net->forward_range(x, 1, 1), x, 0, "empty range");
  expect_error_contains([&] { net->forward_range(x, 2, 4); }, {"Sequential", "[2, 4)"});
  expect_error_contains([&] { (*net)[3]; }, {"Sequential", "index 3"});
  CHECK(net->size() == 3);
}

TEST_CASE("str() prints the module tree", "[module]") {
  auto net = small_net();
  CHECK(net->str() == "Sequential(\n  (0): Linear(in=2, out=3)\n  (1): ReLU()\n  (2): Linear(in=3, out=4, bias=false)\n)");
}

EMBER_CUDA_TEST_CASE("Module::to(cuda) moves parameters in place and matches the CPU", "[module]") {
  auto net = small_net();
  Tensor x = randn({4, 2});
  const Tensor expected = net->forward(x);
  const Tensor weight = net->parameters()[0];
  net->to(kCUDA);
  CHECK(weight.is_cuda());
  for (const Tensor& p : net->parameters()) CHECK(p.is_cuda());
  // Each backend sums 3 terms per hidden unit (2 inputs and the bias) then 3 per output, in its own
  // order: within gamma(3 + 3) of the exact value times the same network on absolute values, ReLU
  // dropped (Higham, Accuracy and Stability, 3.5: a product of matrices). The two are within twice that.
  const std::vector<Tensor> p = net->parameters();  // 0.weight, 0.bias, 2.weight
  auto abs64 = [](const Tensor& t) { return abs(t.to(kCPU).to(kFloat64)); };
  const Tensor magnitude = linear(linear(abs64(x), abs64(p[0]), abs64(p[1])), abs64(p[2]));
  test::expect_within(net->forward(x.to(kCUDA)).to(kCPU), expected, test::sum_error_bound(2 * 6, kFloat32, magnitude),
                      "Sequential on cuda");
  net->to(kCPU);
  CHECK_FALSE(weight.is_cuda());
}

namespace {

// A module written the short way: no name(), a container without forward.
class Holder : public nn::Module {
 public:
  Holder() {
    inner_ = register_module("inner", std::make_shared<nn::Sequential>(nn::Linear(2, 3), nn::ReLU()));
    register_module("head", std::make_shared<nn::Linear>(3, 1));
  }

 private:
  std::shared_ptr<nn::Sequential> inner_;
};

}  // namespace

TEST_CASE("name() defaults to the class's own name and layers keep theirs", "[module]") {
  Holder holder;
  CHECK(std::string(holder.name()) == "Holder");
  CHECK(std::string(nn::Linear(2, 3).name()) == "Linear");
  CHECK(std::string(nn::Functional(ember::relu).name()) == "Functional");
  CHECK(std::string(nn::Functional(ember::relu, "relu").name()) == "relu");
  CHECK(holder.str() == "Holder(\n  (inner): Sequential(\n    (0): Linear(in=2, out=3)\n    (1): ReLU()\n  )\n"
                        "  (head): Linear(in=3, out=1)\n)");
  expect_error_contains([&] { holder.forward(randn({1, 2})); }, {"Holder", "forward is not implemented"});
}

TEST_CASE("Sequential takes layers as values and shared_ptrs, in argument order", "[module]") {
  auto shared = std::make_shared<nn::Linear>(3, 4);
  nn::Linear moved(4, 2);
  const Tensor moved_weight = moved.weight();
  auto net = std::make_shared<nn::Sequential>(nn::Linear(2, 3), nn::ReLU(), shared, std::move(moved),
                                              nn::Functional([](const Tensor& x) { return x * 2.0; }));
  REQUIRE(net->size() == 5);
  CHECK((*net)[2] == shared);  // shared, not copied
  auto last_linear = std::dynamic_pointer_cast<nn::Linear>((*net)[3]);
  REQUIRE(last_linear);
  CHECK(last_linear->weight().is_same(moved_weight));  // the moved layer keeps its tensors
  CHECK(names_of(net->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"});

  Tensor x = randn({5, 2});
  const Tensor expected = last_linear->forward(shared->forward(relu((*net)[0]->forward(x)))) * 2.0;
  expect_close(net->forward(x), expected, 0, "variadic Sequential");
  CHECK(net->str().find("(4): Functional()") != std::string::npos);
}

TEST_CASE("named_modules: the root as \"\", then every descendant with dotted names", "[module]") {
  auto holder = std::make_shared<Holder>();
  std::vector<std::string> names;
  for (const auto& [n, m] : holder->named_modules()) names.push_back(n + ":" + m->name());
  CHECK(names == std::vector<std::string>{":Holder", "inner:Sequential", "inner.0:Linear", "inner.1:ReLU",
                                          "head:Linear"});
  CHECK(holder->named_modules()[0].second == holder);
  CHECK(holder->modules().size() == 5);
  Holder on_stack;
  expect_error_contains([&] { on_stack.named_modules(); }, {"Holder", "std::shared_ptr"});
}

TEST_CASE("apply visits every module, the root first, in named_modules order", "[module]") {
  auto holder = std::make_shared<Holder>();
  std::vector<std::string> seen;
  holder->apply([&](nn::Module& m) { seen.push_back(m.name()); });
  CHECK(seen == std::vector<std::string>{"Holder", "Sequential", "Linear", "ReLU", "Linear"});

  // The libtorch idiom: initialise every Linear's weights through apply.
  holder->apply([](nn::Module& m) {
    if (auto* fc = dynamic_cast<nn::Linear*>(&m)) nn::init::constant_(fc->weight(), 0.5);
  });
  for (const auto& [n, p] : holder->named_parameters())
    if (n.find("weight") != std::string::npos) expect_close(p, full(p.shape(), 0.5), 0, n);
}

TEST_CASE("Sequential in braces builds its layers left to right, as push_back does", "[module]") {
  manual_seed(5);
  auto braced = std::make_shared<nn::Sequential>(nn::Sequential{nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 4)});
  manual_seed(5);
  nn::Sequential pushed;
  pushed.push_back(nn::Linear(2, 3));
  pushed.push_back(nn::ReLU());
  pushed.push_back(nn::Linear(3, 4));
  const auto a = braced->named_parameters(), b = pushed.named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) expect_close(a[i].second, b[i].second, 0, a[i].first);
}

namespace {

// libtorch's habit: a module that declares its own forward (by value, as libtorch's examples do)
// and never overrides forward_impl.
struct Doubler : nn::Module {
  Tensor forward(Tensor x) { return x * 2.0; }
};

// ... holding one of its kind as a registered child, and a libtorch-style Linear stack.
struct TwoStage : nn::Module {
  TwoStage() {
    fc = register_module("fc", std::make_shared<nn::Linear>(2, 2));
    twice = register_module("twice", std::make_shared<Doubler>());
  }
  Tensor forward(const Tensor& x) { return twice->forward(fc->forward(x)) + 1.0; }
  std::shared_ptr<nn::Linear> fc;
  std::shared_ptr<Doubler> twice;
};

}  // namespace

TEST_CASE("a module with a forward of its own runs inside Sequential and as a registered child", "[module]") {
  static_assert(nn::detail::declares_forward<Doubler>::value && nn::detail::declares_forward<TwoStage>::value);
  static_assert(!nn::detail::declares_forward<nn::Linear>::value && !nn::detail::declares_forward<Block>::value);
  const Tensor x = randn({3, 2});
  // Called directly, C++ finds the class's own forward.
  Doubler direct;
  expect_close(direct.forward(x), x * 2.0, 0, "direct");
  // In a Sequential: by value, as a shared_ptr of its class, and pushed back.
  auto shared = std::make_shared<Doubler>();
  nn::Sequential seq(Doubler(), shared);
  seq.push_back(std::make_shared<Doubler>());
  expect_close(seq.forward(x), x * 8.0, 0, "Sequential of Doublers");
  // As a child registered with register_module, reached through the parent's Module::forward.
  auto two = std::make_shared<TwoStage>();
  nn::Sequential outer(two);
  expect_close(outer.forward(x), two->fc->forward(x) * 2.0 + 1.0, 0, "registered child");
  const std::shared_ptr<nn::Module> as_base = two->twice;
  expect_close(as_base->forward(x), x * 2.0, 0, "through the base");
  // A module whose class was never seen (a std::shared_ptr<nn::Module> from the start) says why it
  // cannot run.
  const std::shared_ptr<nn::Module> hidden = std::make_shared<Doubler>();
  expect_error_contains([&] { hidden->forward(x); },
                        {"Doubler", "forward is not implemented", "forward_impl", "nn::Sequential", "register_module"});
  nn::Sequential braced{hidden};
  expect_error_contains([&] { braced.forward(x); }, {"Doubler", "forward_impl"});
}
