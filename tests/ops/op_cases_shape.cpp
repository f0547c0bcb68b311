// Slicing and joining: narrow, select, slice, unsqueeze, squeeze, permute, cat and stack, with
// libtorch's negative dims and indices, empty results, steps, views (a contiguous run of x) and
// copies, and sizes past one thread's share of the CPU copy.
#include <cstdint>

#include "tests/ops/op_case.h"

namespace ember::test {

namespace {

OpCase shape_case(const std::string& name, std::vector<InputSpec> inputs, OpFn fn) {
  return OpCase("shape", name, std::move(inputs), std::move(fn)).exact();  // elements move
}

}  // namespace

std::vector<OpCase> shape_cases() {
  std::vector<OpCase> cases;
  // narrow: a view along dim 0, a copy along later dims; negative dim and start; empty.
  cases.push_back(shape_case("narrow [4, 6] dim 0 start 1 length 2 (view)", {In({4, 6})},
                             [](const Inputs& in) { return narrow(in[0], 0, 1, 2); }));
  cases.push_back(shape_case("narrow [4, 6] dim 1 start 2 length 3", {In({4, 6})},
                             [](const Inputs& in) { return narrow(in[0], 1, 2, 3); }));
  cases.push_back(shape_case("narrow [4, 6] dim -1 start -4 length 2", {In({4, 6})},
                             [](const Inputs& in) { return in[0].narrow(-1, -4, 2); }));
  cases.push_back(shape_case("narrow [2, 3, 5] dim 1 start 3 length 0 (empty)", {In({2, 3, 5})},
                             [](const Inputs& in) { return narrow(in[0], 1, 3, 0); }));
  cases.push_back(shape_case("narrow [1, 4, 3] dim 1 start 1 length 2 (view after a size-1 dim)", {In({1, 4, 3})},
                             [](const Inputs& in) { return narrow(in[0], 1, 1, 2); }));
  cases.push_back(shape_case("narrow of rows 1.. of [6, 4] dim 0 start 2 length 3", {RowsOf({5, 4})},
                             [](const Inputs& in) { return narrow(in[0], 0, 2, 3); }));
  cases.push_back(shape_case("narrow [300, 400] dim 1 start 7 length 250", {In({300, 400})},
                             [](const Inputs& in) { return narrow(in[0], 1, 7, 250); }));
  // select drops the dim.
  // x[i] is select(0, i): a view, negative i from the end.
  cases.push_back(shape_case("operator[] [4, 6] index 2 (view)", {In({4, 6})},
                             [](const Inputs& in) { return in[0][2]; }));
  cases.push_back(shape_case("operator[] [4] index -1 (0-d)", {In({4})}, [](const Inputs& in) { return in[0][-1]; }));
  cases.push_back(shape_case("select [4, 6] dim 0 index 2 (view)", {In({4, 6})},
                             [](const Inputs& in) { return select(in[0], 0, 2); }));
  cases.push_back(shape_case("select [4, 6] dim 1 index -1", {In({4, 6})},
                             [](const Inputs& in) { return in[0].select(1, -1); }));
  cases.push_back(shape_case("select [2, 3, 4] dim -2 index 1", {In({2, 3, 4})},
                             [](const Inputs& in) { return select(in[0], -2, 1); }));
  cases.push_back(shape_case("select [5] dim 0 index -2 (0-d result)", {In({5})},
                             [](const Inputs& in) { return select(in[0], 0, -2); }));
  // slice: steps, negative and clamped bounds, empty ranges.
  cases.push_back(shape_case("slice [10] 0:10:3", {In({10})},
                             [](const Inputs& in) { return slice(in[0], 0, 0, 10, 3); }));
  cases.push_back(shape_case("slice [4, 9] dim 1 -7:-1:2", {In({4, 9})},
                             [](const Inputs& in) { return slice(in[0], 1, -7, -1, 2); }));
  cases.push_back(shape_case("slice [4, 9] dim 1 -100:100 (clamped to all)", {In({4, 9})},
                             [](const Inputs& in) { return in[0].slice(1, -100, 100); }));
  cases.push_back(shape_case("slice [4, 9] dim 1 5:2 (empty)", {In({4, 9})},
                             [](const Inputs& in) { return slice(in[0], 1, 5, 2); }));
  cases.push_back(shape_case("slice [4, 9] dim 1 12: (empty, past the end)", {In({4, 9})},
                             [](const Inputs& in) { return slice(in[0], 1, 12); }));
  cases.push_back(shape_case("slice [3, 4, 5] dim -2 1::2", {In({3, 4, 5})},
                             [](const Inputs& in) { return slice(in[0], -2, 1, INT64_MAX, 2); }));
  cases.push_back(shape_case("slice [6, 3] dim 0 ::4 (a copy: step along dim 0)", {In({6, 3})},
                             [](const Inputs& in) { return slice(in[0], 0, 0, INT64_MAX, 4); }));
  cases.push_back(shape_case("slice [6, 3] dim 0 2:5 (view)", {In({6, 3})},
                             [](const Inputs& in) { return slice(in[0], 0, 2, 5); }));
  cases.push_back(shape_case("slice [200, 300] dim 0 1::3", {In({200, 300})},
                             [](const Inputs& in) { return slice(in[0], 0, 1, INT64_MAX, 3); }));
  // unsqueeze and squeeze: views.
  cases.push_back(shape_case("unsqueeze [3, 4] dim 0", {In({3, 4})},
                             [](const Inputs& in) { return in[0].unsqueeze(0); }));
  cases.push_back(shape_case("unsqueeze [3, 4] dim -1", {In({3, 4})},
                             [](const Inputs& in) { return unsqueeze(in[0], -1); }));
  cases.push_back(shape_case("unsqueeze [] dim 0", {In({})}, [](const Inputs& in) { return unsqueeze(in[0], 0); }));
  cases.push_back(shape_case("squeeze [1, 3, 1, 4]", {In({1, 3, 1, 4})},
                             [](const Inputs& in) { return in[0].squeeze(); }));
  cases.push_back(shape_case("squeeze [1, 3, 1, 4] dim -2", {In({1, 3, 1, 4})},
                             [](const Inputs& in) { return squeeze(in[0], -2); }));
  cases.push_back(shape_case("squeeze [1, 3, 1, 4] dim 1 (size 3: unchanged)", {In({1, 3, 1, 4})},
                             [](const Inputs& in) { return squeeze(in[0], 1); }));
  // permute: copies; backward is the inverse permutation.
  cases.push_back(shape_case("permute [2, 3, 4] (2, 0, 1)", {In({2, 3, 4})},
                             [](const Inputs& in) { return in[0].permute({2, 0, 1}); }));
  cases.push_back(shape_case("permute [2, 3, 4] (-1, -3, -2)", {In({2, 3, 4})},
                             [](const Inputs& in) { return permute(in[0], {-1, -3, -2}); }));
  cases.push_back(shape_case("permute [2, 3, 4, 5] (1, 3, 0, 2)", {In({2, 3, 4, 5})},
                             [](const Inputs& in) { return permute(in[0], {1, 3, 0, 2}); }));
  cases.push_back(shape_case("permute [2, 0, 3] (2, 1, 0) (empty)", {In({2, 0, 3})},
                             [](const Inputs& in) { return permute(in[0], {2, 1, 0}); }));
  cases.push_back(shape_case("permute [40, 50, 30] (1, 2, 0)", {In({40, 50, 30})},
                             [](const Inputs& in) { return permute(in[0], {1, 2, 0}); }));
  cases.push_back(shape_case("permute of rows 1.. of [4, 3] (1, 0)", {RowsOf({3, 3})},
                             [](const Inputs& in) { return permute(in[0], {1, 0}); }));
  // cat: different sizes along dim, an empty part, libtorch's skipped [0], a constant part.
  cases.push_back(shape_case("cat [2, 3] and [4, 3] dim 0", {In({2, 3}), In({4, 3})},
                             [](const Inputs& in) { return cat({in[0], in[1]}, 0); }));
  cases.push_back(shape_case("cat [2, 3], [2, 1], [2, 0] and [2, 5] dim 1",
                             {In({2, 3}), In({2, 1}), In({2, 0}), In({2, 5})},
                             [](const Inputs& in) { return cat({in[0], in[1], in[2], in[3]}, 1); }));
  cases.push_back(shape_case("cat [2, 3, 2] and [2, 3, 4] dim -1", {In({2, 3, 2}), In({2, 3, 4})},
                             [](const Inputs& in) { return cat({in[0], in[1]}, -1); }));
  cases.push_back(shape_case("cat [0] and [3, 2] dim 1 ([0] is left out)", {In({0}), In({3, 2})},
                             [](const Inputs& in) { return cat({in[0], in[1]}, 1); }));
  cases.push_back(shape_case("cat [3, 2] and a constant [3, 2] dim 0", {In({3, 2}), Constant({3, 2})},
                             [](const Inputs& in) { return cat({in[0], in[1]}, 0); }));
  cases.push_back(shape_case("cat [100, 300] and [100, 200] dim 1", {In({100, 300}), In({100, 200})},
                             [](const Inputs& in) { return cat({in[0], in[1]}, 1); }));
  // stack: unsqueeze + cat.
  cases.push_back(shape_case("stack three [2, 3] dim -1", {In({2, 3}), In({2, 3}), In({2, 3})},
                             [](const Inputs& in) { return stack({in[0], in[1], in[2]}, -1); }));
  cases.push_back(shape_case("stack two [2, 3] dim 0", {In({2, 3}), In({2, 3})},
                             [](const Inputs& in) { return stack({in[0], in[1]}); }));
  cases.push_back(shape_case("stack two [2, 3] dim 1", {In({2, 3}), In({2, 3})},
                             [](const Inputs& in) { return stack({in[0], in[1]}, 1); }));
  // Chained: the gradient of one input reaches it through two slices of it.
  cases.push_back(shape_case("cat of two slices of one [4, 5]", {In({4, 5})}, [](const Inputs& in) {
    return cat({narrow(in[0], 1, 0, 2), slice(in[0], 1, 1, INT64_MAX, 2)}, 1);
  }).sums(2).stored(1));  // two gradients meet in column 1: one rounding of their sum
  // Integers move exactly too (no gradient).
  for (DType dtype : {DType::i64, DType::u8}) {
    cases.push_back(OpCase("shape", std::string("slice and cat of ") + dtype_name(dtype) + " [3, 7]",
                           {In({3, 7}, Values::integers)},
                           [dtype](const Inputs& in) {
                             const Tensor x = in[0].to(dtype);
                             return cat({slice(x, 1, 1, INT64_MAX, 3), permute(x, {1, 0}).narrow(0, 2, 2).t()}, 1);
                           })
                        .only({DType::f64})
                        .no_backward()
                        .against_same_dtype()
                        .exact());
  }
  return cases;
}

}  // namespace ember::test
