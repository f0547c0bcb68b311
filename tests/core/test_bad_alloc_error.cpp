// with_bad_alloc_as_error: a reader's boundary turns a failed host allocation into ember::Error.
#include <new>

#include "core/bad_alloc_error.h"
#include "tests/support/expect.h"

using namespace ember;

TEST_CASE("with_bad_alloc_as_error passes results through and words a std::bad_alloc", "[core]") {
  CHECK(with_bad_alloc_as_error("read_idx: x", [] { return 42; }) == 42);
  test::expect_error_contains([] { with_bad_alloc_as_error("read_idx: x.gz", []() -> int { throw std::bad_alloc(); }); },
                              {"read_idx: x.gz", "out of memory"});
  // Other errors pass unchanged.
  test::expect_error_contains([] { with_bad_alloc_as_error("read_idx: x", [] { EMBER_THROW("bad magic"); }); },
                              {"bad magic"});
}
