#include "tests/ops/op_case.h"

namespace ember::test {

InputSpec In(const Shape& shape, Values values) { return InputSpec{shape, values}; }

InputSpec Labels(const Shape& shape, int64_t classes) {
  InputSpec s{shape, Values::labels};
  s.label_limit = classes;
  s.requires_grad = false;
  return s;
}

InputSpec RowsOf(const Shape& shape, Values values) {
  InputSpec s{shape, values};
  s.row_view = true;
  return s;
}

InputSpec Constant(const Shape& shape, Values values) {
  InputSpec s{shape, values};
  s.requires_grad = false;
  return s;
}

}  // namespace ember::test
