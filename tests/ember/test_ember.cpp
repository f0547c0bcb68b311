// ember/ember.h as a ported libtorch program uses it: the documented idiom (ember:: where
// libtorch writes torch::, no `using namespace ember;`) next to a program's own train() function
// and a variable named data, which ember::train and ember::data would collide with under a
// using-directive; item() without a type, w[i], mm, the CPU threads and the GPU check.
#include <cstdint>
#include <sstream>
#include <vector>

#include "ember/ember.h"
#include "tests/support/expect.h"

// The most common shape of a libtorch program: functions named train and test, and data.
namespace {
std::vector<float> data = {1.0f, 2.0f, 3.0f};
}  // namespace

static float train(const ember::Tensor& x, int steps) {
  ember::Tensor w = ember::zeros({3}).requires_grad_();
  ember::optim::SGD sgd({w}, 0.1);  // SgdOptions from a number, as libtorch's SGDOptions
  for (int i = 0; i < steps; ++i) {
    sgd.zero_grad();
    ember::Tensor loss = ember::mse_loss(w, x);
    loss.backward();
    sgd.step();
  }
  return ember::mse_loss(w, x).item().toFloat();
}

static int64_t test(const ember::Tensor& output, const ember::Tensor& targets) {
  return output.argmax(1).eq(targets).sum().item<int64_t>();
}

TEST_CASE("a program's own train(), test() and data compile beside ember's names", "[ember]") {
  const ember::Tensor x = ember::from_vector<float>(data, {3});
  CHECK(train(x, 50) < train(x, 5));
  const ember::Tensor output = ember::tensor({{0.1, 0.9}, {0.8, 0.2}, {0.3, 0.7}});
  CHECK(test(output, ember::tensor({1, 0, 0})) == 2);
  // Unqualified calls on ember tensors find ember's functions by argument-dependent lookup.
  CHECK(relu(x).sum().item<float>() == 6.0f);
}

TEST_CASE("item() without a type: a Scalar, exact for integers, a double on its own", "[ember]") {
  const ember::Scalar f = ember::tensor({2.5}).item();
  CHECK(f.isFloatingPoint());
  CHECK(f.toFloat() == 2.5f);
  CHECK(f.toLong() == 2);
  const double as_double = f;  // converts on its own
  CHECK(as_double == 2.5);
  const ember::Scalar n = ember::from_vector<int64_t>({int64_t{1} << 60}, {1}).item();
  CHECK(n.isIntegral());
  CHECK(n.toLong() == int64_t{1} << 60);  // exact, where a double would round
  CHECK(ember::ones({4}, ember::kByte).sum().item().toInt() == 4);
  std::ostringstream os;
  os << n << " " << f;
  CHECK(os.str() == "1152921504606846976 2.5");
  // In arithmetic, as libtorch's regression example writes x.mm(w) + b.item().
  const ember::Tensor y = ember::ones({2}) + ember::tensor({3.0}).item();
  CHECK(y.to_vector<float>() == std::vector<float>{4, 4});
  ember::test::expect_error_contains([] { ember::ones({2}).item(); }, {"item", "[2]", "2 elements"});
}

TEST_CASE("w[i] is select(0, i): a view, negative from the end, out of range named", "[ember]") {
  const ember::Tensor w = ember::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  CHECK(w[1].to_vector<float>() == std::vector<float>{3, 4});
  CHECK(w[-1].to_vector<float>() == std::vector<float>{5, 6});
  CHECK(w[2][0].item<float>() == 5.0f);
  CHECK(w[1].shares_storage(w));  // a view, as libtorch's
  ember::test::expect_error_contains([&] { w[3]; }, {"operator[]", "index 3", "[3, 2]", "-3..2"});
  ember::Tensor g = w.detach().clone().requires_grad_();
  g[1].sum().backward();
  CHECK(g.grad().to_vector<float>() == std::vector<float>{0, 0, 1, 1, 0, 0});
}

TEST_CASE("mm multiplies two matrices and names both shapes otherwise", "[ember]") {
  const ember::Tensor a = ember::tensor({{1.0, 2.0}, {3.0, 4.0}});
  const ember::Tensor b = ember::tensor({5.0, 6.0}).reshape({2, 1});
  CHECK(a.mm(b).to_vector<float>() == std::vector<float>{17, 39});
  CHECK(ember::mm(a, b).shape() == ember::Shape{2, 1});
  ember::test::expect_error_contains([&] { b.mm(a); }, {"mm", "[2, 1]", "[2, 2]"});
  ember::test::expect_error_contains([&] { ember::mm(a.unsqueeze(0), b); }, {"mm", "2-D", "[1, 2, 2]"});
}

TEST_CASE("set_num_threads and get_num_threads, the GPU check", "[ember]") {
  const int before = ember::get_num_threads();
  ember::set_num_threads(1);
  CHECK(ember::get_num_threads() == 1);
  ember::set_num_threads(before);
  CHECK(ember::get_num_threads() == before);
  ember::test::expect_error_contains([] { ember::set_num_threads(0); }, {"set_num_threads", "0"});
  CHECK(ember::cuda::is_available() == (ember::cuda::device_count() > 0));
}
