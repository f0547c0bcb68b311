// Runs the op-contract list (tests/ops/op_case.h) on every backend: the CPU always; CUDA, with
// ember's kernels and with cuBLAS/cuDNN, when a GPU is present ("cuda: " cases skip otherwise).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

#include "core/generator.h"
#include "core/parse_integer.h"
#include "core/row_view.h"
#include "kernels/ops.h"
#include "kernels/providers.h"
#include "memory/guard_bytes.h"
#include "tests/ops/op_case.h"
#include "tests/support/error_bound.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;
using namespace ember::test;

namespace {

struct Backend {
  const char* name;
  Device device;
  kernels::GemmProvider gemm;
  kernels::ConvProvider conv;
};
const Backend kCpu{"cpu", kCPU, kernels::GemmProvider::custom, kernels::ConvProvider::custom};
const Backend kCudaEmber{"cuda (ember kernels)", kCUDA, kernels::GemmProvider::custom, kernels::ConvProvider::custom};
const Backend kCudaVendor{"cuda (cuBLAS, cuDNN)", kCUDA, kernels::GemmProvider::cublas, kernels::ConvProvider::cudnn};

constexpr int64_t kGradcheckMaxElements = 600;  // gradcheck runs two forwards per input element

bool is_floating_spec(const InputSpec& s) { return s.values != Values::labels; }

// The one fp64 draw (i64 for labels) every dtype and device of a case starts from.
Tensor draw(const InputSpec& s, uint64_t seed) {
  std::vector<int64_t> sizes = s.shape.sizes();
  if (s.row_view) {
    REQUIRE(!sizes.empty());
    sizes[0] += 1;
  }
  const Shape shape(sizes);
  manual_seed(seed);
  const std::vector<double> u = rand(shape, TensorOptions(DType::f64), 0.0, 1.0).to_vector<double>();
  std::vector<double> v(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    switch (s.values) {
      case Values::normal: break;
      case Values::away_from_zero: {
        const double m = std::fabs(2 * u[i] - 1);
        v[i] = (u[i] < 0.5 ? -1 : 1) * (0.25 + 1.75 * m);
        break;
      }
      case Values::positive: v[i] = 0.25 + 1.75 * u[i]; break;
      case Values::labels: v[i] = std::floor(u[i] * static_cast<double>(s.label_limit)); break;
      case Values::integers: v[i] = std::floor(u[i] * 200); break;
      case Values::probability: v[i] = 0.05 + 0.9 * u[i]; break;
    }
  }
  if (s.values == Values::normal) return randn(shape, TensorOptions(DType::f64));
  const Tensor t = from_vector<double>(v, shape, TensorOptions(DType::f64));
  return s.values == Values::labels ? t.to(DType::i64) : t;
}

// What a run sees: the draw rounded to dtype (floating inputs), on the device, a fresh leaf.
Tensor materialize(const Tensor& master, const InputSpec& s, DType dtype, DType compute, Device device,
                   bool requires_grad) {
  Tensor t = is_floating_spec(s) ? master.to(dtype).to(compute) : master;
  t = t.to(device).clone().detach();
  if (s.row_view) t = row_view(t, 1, s.shape.sizes()[0]);
  if (requires_grad && is_floating_spec(s) && s.requires_grad) t.requires_grad_(true);
  return t;
}

// The fp64 draw y.backward's w is rounded from, drawn once per case: the tested run, the reference
// and the magnitude run of every dtype take the same one (a draw of a million normals per run was a
// third of the elementwise contract's time).
class BackwardWeights {
 public:
  explicit BackwardWeights(uint64_t seed) : seed_(seed) {}
  const Tensor& of_shape(const Shape& shape) {
    if (!master_.defined() || master_.shape() != shape) {
      manual_seed(seed_);
      master_ = randn(shape, TensorOptions(DType::f64));
    }
    return master_;
  }

 private:
  uint64_t seed_;
  Tensor master_;
};

struct Result {
  Tensor y;
  Tensor w;                   // what y.backward was given
  std::vector<Tensor> grads;  // one per input; undefined where no gradient was asked for
};

// y = fn(inputs) and, for a differentiable floating y, y.backward(w) with w the case's fp64 draw
// of y's shape rounded to y's dtype (the reference takes the tested run's rounding); |w| when
// `absolute` (the magnitude run).
Result run_op(const OpCase& c, const Inputs& inputs, BackwardWeights& weights, std::optional<DType> w_rounding,
              bool absolute = false) {
  Result r;
  r.y = c.fn(inputs);
  if (!c.backward || !is_floating(r.y.dtype()) || !r.y.requires_grad()) return r;
  const Tensor& w_master = weights.of_shape(r.y.shape());
  const DType rounding = w_rounding.value_or(r.y.dtype());
  r.w = (absolute ? abs(w_master) : w_master).to(rounding).to(r.y.dtype()).to(r.y.device());
  r.y.backward(r.w);
  for (const Tensor& t : inputs) r.grads.push_back(t.requires_grad() ? t.grad() : Tensor());
  return r;
}

// The magnitude of every compared element (Magnitude in op_case.h): y's first, then each gradient's.
std::vector<Tensor> magnitudes(const OpCase& c, const Inputs& reference, const Result& want,
                               const std::vector<Tensor>& masters, DType dtype, BackwardWeights& weights) {
  std::vector<Tensor> m;
  if (c.magnitude == Magnitude::of_result) {
    m.push_back(add(abs(want.y.detach().to(DType::f64)), 1.0));
    const double w_scale = want.w.defined() && want.w.numel() > 0 ? max(abs(want.w.to(DType::f64))).item<double>() : 0.0;
    for (const Tensor& g : want.grads) m.push_back(g.defined() ? add(abs(g.to(DType::f64)), w_scale) : Tensor());
  } else {
    Inputs abs_inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Tensor master = is_floating_spec(c.inputs[i]) ? abs(masters[i]) : masters[i];
      abs_inputs.push_back(materialize(master, c.inputs[i], dtype, DType::f64, kCPU, c.backward));
    }
    const Result r = run_op(c, abs_inputs, weights, want.y.dtype(), true);
    m.push_back(abs(r.y.detach().to(DType::f64)));
    for (const Tensor& g : r.grads) m.push_back(g.defined() ? abs(g.to(DType::f64)) : Tensor());
  }
  if (!c.magnitude_fn) return m;
  Inputs detached;
  for (const Tensor& t : reference) detached.push_back(is_floating(t.dtype()) ? t.detach().to(DType::f64) : t.detach());
  return c.magnitude_fn(detached, want.w.defined() ? want.w.to(DType::f64) : Tensor(), std::move(m));
}

// |got - want| <= the case's error model on that element's magnitude.
void expect_within_model(const OpCase& c, DType dtype, const Tensor& got, const Tensor& want, const Tensor& magnitude,
                         const std::string& what) {
  std::vector<double> bound = magnitude.to_vector<double>();
  for (double& b : bound) b = c.error.bound(dtype, b);
  expect_within(got.to(kCPU), want.to_vector<double>(), bound, what);
}

std::string fail_text(const OpCase& c, const Backend& b, DType dtype) {
  return c.family + " / " + c.name + " on " + b.name + " in " + dtype_name(dtype);
}

void run_case_in_dtype(const OpCase& c, const Backend& b, DType dtype, const std::vector<Tensor>& masters,
                       BackwardWeights& weights) {
  const std::string label = fail_text(c, b, dtype);
  INFO(label);
  Inputs tested, reference;
  const DType ref_dtype = c.reference == Reference::cpu_f64 ? DType::f64 : dtype;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    tested.push_back(materialize(masters[i], c.inputs[i], dtype, dtype, b.device, c.backward));
    reference.push_back(materialize(masters[i], c.inputs[i], dtype, ref_dtype, kCPU, c.backward));
  }
  Result got;
  std::vector<std::string> violations;
  {
    GuardBytesScope guard;
    got = run_op(c, tested, weights, std::nullopt);
    violations = guard.violations();
  }
  const Result want = run_op(c, reference, weights, got.y.dtype());
  for (const std::string& v : violations) FAIL_CHECK(label << ": " << v);
  CHECK(got.y.device() == b.device);
  if (c.reference == Reference::cpu_same_dtype) {
    CHECK(got.y.dtype() == want.y.dtype());
  } else if (!b.device.is_cpu()) {  // the same output dtype as the CPU's (cross_entropy's f32 loss of f16 logits)
    Inputs cpu_inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      cpu_inputs.push_back(materialize(masters[i], c.inputs[i], dtype, dtype, kCPU, false));
    CHECK(got.y.dtype() == c.fn(cpu_inputs).dtype());
  }
  const std::vector<Tensor> m = magnitudes(c, reference, want, masters, dtype, weights);
  expect_within_model(c, dtype, got.y, want.y, m[0], label + ": y");
  REQUIRE(got.grads.size() == want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) {
    const std::string name = label + ": gradient of input " + std::to_string(i);
    CHECK(got.grads[i].defined() == want.grads[i].defined());
    if (got.grads[i].defined() && want.grads[i].defined())
      expect_within_model(c, dtype, got.grads[i], want.grads[i], m[i + 1], name);
  }
}

void run_gradcheck(const OpCase& c, const Backend& b, const std::vector<Tensor>& masters) {
  int64_t elements = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (is_floating_spec(c.inputs[i]) && c.inputs[i].requires_grad) elements += c.inputs[i].shape.numel();
  if (!c.backward || !c.gradcheck || elements == 0 || elements > kGradcheckMaxElements) return;
  if (std::find(c.dtypes.begin(), c.dtypes.end(), DType::f64) == c.dtypes.end()) return;
  Inputs inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Tensor t = materialize(masters[i], c.inputs[i], DType::f64, DType::f64, b.device, false);
    inputs.push_back(t);
  }
  // gradcheck differentiates every floating input; constants are wrapped so it leaves them alone.
  std::vector<size_t> varied;
  Inputs varied_inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (is_floating_spec(c.inputs[i]) && c.inputs[i].requires_grad) {
      varied.push_back(i);
      varied_inputs.push_back(inputs[i]);
    }
  const GradcheckFn fn = [&](const Inputs& v) {
    Inputs all = inputs;
    for (size_t k = 0; k < varied.size(); ++k) all[varied[k]] = v[k];
    return c.fn(all);
  };
  expect_gradcheck(fn, varied_inputs, c.family + " / " + c.name + " on " + b.name);
}

// EMBER_OP_CONTRACT_MAX_ELEMENTS=N leaves out the cases with more input elements than N (the
// GPU check sets it under compute-sanitizer, which runs kernels ~100x slower); it says so.
int64_t max_input_elements() {
  const char* limit = std::getenv("EMBER_OP_CONTRACT_MAX_ELEMENTS");
  return limit == nullptr ? std::numeric_limits<int64_t>::max()
                          : parse_integer(limit, "EMBER_OP_CONTRACT_MAX_ELEMENTS", 0, std::numeric_limits<int64_t>::max());
}

void run_cases(const std::vector<OpCase>& cases, const Backend& b) {
  kernels::ProviderScope providers(b.gemm, b.conv);
  const int64_t limit = max_input_elements();
  int left_out = 0;
  uint64_t seed = 1000;
  for (const OpCase& c : cases) {
    seed += 10;
    int64_t elements = 0;
    for (const InputSpec& spec : c.inputs) elements += spec.shape.numel();
    if (elements > limit) {
      ++left_out;
      continue;
    }
    std::vector<Tensor> masters;
    for (size_t i = 0; i < c.inputs.size(); ++i) masters.push_back(draw(c.inputs[i], seed + 2 + i));
    BackwardWeights weights(seed + 1);
    for (DType dtype : c.dtypes) {
      try {
        run_case_in_dtype(c, b, dtype, masters, weights);
      } catch (const std::exception& e) {
        FAIL_CHECK(fail_text(c, b, dtype) << " threw: " << e.what());
      }
    }
    try {
      run_gradcheck(c, b, masters);
    } catch (const std::exception& e) {
      FAIL_CHECK(c.family << " / " << c.name << " gradcheck on " << b.name << " threw: " << e.what());
    }
  }
  if (left_out > 0)
    WARN(left_out << " case(s) with more than " << limit << " input elements left out (EMBER_OP_CONTRACT_MAX_ELEMENTS)");
}

void run_errors(const std::string& family, const Backend& b) {
  kernels::ProviderScope providers(b.gemm, b.conv);
  for (const ErrorCase& e : error_cases()) {
    if (e.family != family) continue;
    INFO(e.name << " on " << b.name);
    expect_error_contains([&] { e.fn(b.device); }, e.fragments);
  }
}

}  // namespace

#define EMBER_OP_CONTRACT(family, cases)                                                                  \
  TEST_CASE("op contract on the cpu: " family, "[ops][" family "]") {                                    \
    run_cases(cases(), kCpu);                                                                              \
    run_errors(family, kCpu);                                                                              \
  }                                                                                                        \
  EMBER_CUDA_TEST_CASE("op contract with ember's kernels: " family, "[ops][" family "]") {               \
    run_cases(cases(), kCudaEmber);                                                                        \
    run_errors(family, kCudaEmber);                                                                        \
  }                                                                                                        \
  EMBER_CUDA_TEST_CASE("op contract with cuBLAS and cuDNN: " family, "[ops][" family "]") {              \
    run_cases(cases(), kCudaVendor);                                                                       \
    run_errors(family, kCudaVendor);                                                                       \
  }

EMBER_OP_CONTRACT("elementwise", elementwise_cases)
EMBER_OP_CONTRACT("reduce", reduce_cases)
EMBER_OP_CONTRACT("softmax", softmax_cases)
EMBER_OP_CONTRACT("matmul", matmul_cases)
EMBER_OP_CONTRACT("cnn", cnn_cases)
EMBER_OP_CONTRACT("optimizer", optimizer_cases)
EMBER_OP_CONTRACT("shape", shape_cases)
EMBER_OP_CONTRACT("loss", loss_cases)

TEST_CASE("guard bytes catch a write past the end and before the start", "[ops][guard]") {
  for (int side : {-1, 1}) {
    GuardBytesScope guard;
    const Tensor t = empty({4}, TensorOptions(DType::f32));
    auto* bytes = static_cast<unsigned char*>(t.data_ptr());
    bytes[side < 0 ? -1 : 16] = 0;  // one byte outside, inside the guard
    const std::vector<std::string> v = guard.violations();
    REQUIRE(v.size() == 1);
    CHECK(v[0].find(side < 0 ? "before its first byte" : "past its end") != std::string::npos);
    CHECK(v[0].find("Tensor[4] f32") != std::string::npos);
  }
  GuardBytesScope guard;
  const Tensor t = empty({3}, TensorOptions(DType::f32));
  for (float v : t.to_vector<float>()) CHECK(std::isnan(v));  // unwritten outputs read as NaN
  CHECK(guard.violations().empty());
}
