// Checked entry points of the factories' fillers: arange_, uniform_, normal_ (kernels/{cpu,cuda}/random).
#include "kernels/backend_dispatch.h"
#include "kernels/checks.h"

namespace ember::kernels {

void arange_(const Tensor& t, double start, double step) {
  check_defined(t, "arange_", "t");
  bump_version(t);
  EMBER_BACKEND(t.device(), arange_, t, start, step);
}

void uniform_(const Tensor& t, GeneratorState state, double low, double high) {
  check_floating(t, "uniform_");
  bump_version(t);
  EMBER_BACKEND(t.device(), uniform_, t, state, low, high);
}

void normal_(const Tensor& t, GeneratorState state, double mean, double std) {
  check_floating(t, "normal_");
  bump_version(t);
  EMBER_BACKEND(t.device(), normal_, t, state, mean, std);
}

}  // namespace ember::kernels
