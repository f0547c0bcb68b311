// read_decimal / parse_integer: plain decimal digits only, never clamped or wrapped.
#include <cstdint>

#include "core/parse_integer.h"
#include "tests/support/expect.h"

using namespace ember;

TEST_CASE("read_decimal takes plain digits up to INT64_MAX and nothing else", "[core]") {
  int64_t n = -1;
  CHECK(read_decimal("0", &n));
  CHECK(n == 0);
  CHECK(read_decimal("007", &n));
  CHECK(n == 7);
  CHECK(read_decimal("9223372036854775807", &n));
  CHECK(n == INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "-1", "-0", "0x10", "1e3", "1.0", "inf", "nan", "9223372036854775808",
                          "99999999999999999999"}) {
    INFO("'" << bad << "'");
    n = 5;
    CHECK_FALSE(read_decimal(bad, &n));
    CHECK(n == 5);
  }
}

TEST_CASE("parse_integer names the setting, the text and the range", "[core]") {
  CHECK(parse_integer("12", "EMBER_X", 1, 100) == 12);
  test::expect_error_contains([] { parse_integer("0", "EMBER_X", 1, 100); }, {"EMBER_X", "'0'", "from 1 to 100"});
  test::expect_error_contains([] { parse_integer("1e30", "EMBER_X", 1, 100); }, {"EMBER_X", "'1e30'", "plain decimal"});
  test::expect_error_contains([] { parse_integer("inf", "EMBER_X", 0, INT64_MAX); }, {"EMBER_X", "'inf'"});
}
