#include "tests/support/expect.h"

#include <cmath>
#include <sstream>

namespace ember::test {

void expect_values(const Tensor& actual, const std::vector<double>& expected, double tol, const std::string& op) {
  const std::vector<double> a = actual.to_vector<double>();
  INFO(op << ": output " << actual.str());
  REQUIRE(a.size() == expected.size());
  double worst = -1;
  size_t worst_index = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // NaN matches NaN and an infinity the same infinity, as in PyTorch's assert_close(equal_nan=True).
    const bool same_special = (std::isnan(a[i]) && std::isnan(expected[i])) || (std::isinf(a[i]) && a[i] == expected[i]);
    const double err = same_special ? 0.0 : std::fabs(a[i] - expected[i]) / (1.0 + std::fabs(expected[i]));
    if (!(err <= worst) || std::isnan(err)) {
      worst = std::isnan(err) ? INFINITY : err;
      worst_index = i;
    }
  }
  if (!a.empty()) {
    INFO(op << ": worst at flat index " << worst_index << ": got " << a[worst_index] << ", expected "
            << expected[worst_index] << " (relative error " << worst << ", tolerance " << tol << ")");
    CHECK(worst <= tol);
  }
}

void expect_close(const Tensor& actual, const Tensor& expected, double tol, const std::string& op) {
  INFO(op << ": shapes " << actual.shape() << " vs " << expected.shape());
  REQUIRE(actual.shape() == expected.shape());
  expect_values(actual, expected.to_vector<double>(), tol, op);
}

void expect_gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const std::string& op,
                      GradcheckOptions options) {
  const GradcheckResult r = gradcheck(fn, inputs, options);
  INFO(op << " gradcheck: " << r.message);
  CHECK(r.ok);
}

void expect_error_contains(const std::function<void()>& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& f : fragments) {
      INFO("error message: " << message);
      CHECK(message.find(f) != std::string::npos);
    }
    return;
  }
  FAIL("expected an ember::Error containing '" << (fragments.empty() ? "" : fragments[0]) << "'");
}

}  // namespace ember::test
