// Optimizer::state_dict / load_state_dict (optim/optimizer.h, optim/state_dict.h): a fresh
// optimizer loaded with another's state continues exactly as the original would, and a state
// that does not fit is refused with the entry and both shapes named.
#include <memory>
#include <vector>

#include "kernels/factories.h"
#include "optim/adam.h"
#include "optim/grad_scaler.h"
#include "optim/sgd.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

namespace {

const std::vector<std::vector<double>> kGrads = {{0.5, 1.0, -1.0}, {-0.25, 2.0, 0.0}, {1.0, 0.5, 3.0}};

std::vector<Tensor> fresh_params() {
  return {from_vector<float>({1, -2, 0.5f}, {3}).requires_grad_(), from_vector<float>({4}, {1}).requires_grad_()};
}

void set_grads(const std::vector<Tensor>& params, const std::vector<double>& g) {
  params[0].set_grad(from_vector<double>(g, {3}, TensorOptions(kFloat32)));
  params[1].set_grad(from_vector<double>({g[0] * g[1]}, {1}, TensorOptions(kFloat32)));
}

// Two steps on one optimizer, its state into a second over copies of the parameters, then a
// third step on both: the parameters must agree bit for bit.
template <class Opt, class Options>
void check_round_trip(const Options& options, const char* what) {
  INFO(what);
  std::vector<Tensor> a = fresh_params();
  Opt first(a, options);
  for (int s = 0; s < 2; ++s) {
    set_grads(a, kGrads[static_cast<size_t>(s)]);
    first.step();
  }
  first.set_lr(first.lr() * 0.5);  // a schedule moved it: the state carries it
  std::vector<Tensor> b;
  for (const Tensor& p : a) b.push_back(p.detach().clone().requires_grad_());
  Opt second(b, options);
  const NamedTensors state = first.state_dict();
  second.load_state_dict(TensorMap(state.begin(), state.end()));
  CHECK(second.lr() == first.lr());
  set_grads(a, kGrads[2]);
  set_grads(b, kGrads[2]);
  first.step();
  second.step();
  for (size_t i = 0; i < a.size(); ++i) test::expect_close(b[i], a[i], 0.0, what);
}

}  // namespace

TEST_CASE("optimizer state_dict: a loaded optimizer continues bit for bit", "[optim]") {
  check_round_trip<optim::SGD>(optim::SgdOptions(0.1).momentum(0.9).nesterov(), "SGD nesterov");
  check_round_trip<optim::Adam>(optim::AdamOptions(1e-2).weight_decay(1e-3), "Adam");
  check_round_trip<optim::AdamW>(optim::AdamOptions(1e-2).weight_decay(0.01), "AdamW");
}

TEST_CASE("optimizer state_dict: names its entries, leaves out what no step made", "[optim]") {
  std::vector<Tensor> p = fresh_params();
  optim::Adam adam(p, optim::AdamOptions(1e-3));
  CHECK(adam.state_dict().size() == 1);  // "lr" only before the first step
  p[0].set_grad(from_vector<float>({1, 1, 1}, {3}));
  adam.step();  // p[1] had no gradient: no state for it
  std::vector<std::string> names;
  for (const auto& [name, t] : adam.state_dict()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"lr", "exp_avg.0", "exp_avg_sq.0", "step.0"});
}

TEST_CASE("optimizer load_state_dict refuses a state that does not fit", "[optim]") {
  std::vector<Tensor> p = fresh_params();
  optim::SGD sgd(p, optim::SgdOptions(0.1).momentum(0.9));
  expect_error_contains([&] { sgd.load_state_dict({{"momentum_buffer.0", zeros({4})}}); },
                        {"SGD", "momentum_buffer.0", "[4]", "[3]"});
  expect_error_contains([&] { sgd.load_state_dict({{"exp_avg.0", zeros({3})}}); }, {"SGD", "unexpected entry", "exp_avg.0"});
  expect_error_contains([&] { sgd.load_state_dict({{"lr", zeros({2})}}); }, {"lr", "1 element"});
}

TEST_CASE("GradScaler state_dict round trip", "[optim]") {
  optim::GradScaler scaler;
  scaler.update(true);
  scaler.update(false);
  optim::GradScaler other;
  const NamedTensors state = scaler.state_dict();
  other.load_state_dict(TensorMap(state.begin(), state.end()));
  CHECK(other.scale() == scaler.scale());
  CHECK(other.growth_tracker() == 1);
  CHECK(other.skipped_steps() == 1);
  expect_error_contains([&] { other.load_state_dict({{"scale", full({1}, 0.0, TensorOptions(kFloat64))}}); },
                        {"GradScaler", "scale"});
}
