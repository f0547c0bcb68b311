// parse_byte_size: a table of sizes it must read (units, decimals, the int64 limit)
// and of text it must reject with an error naming the option and the text (inf and
// 1e30 used to be read by strtod and silently removed the memory limit).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "memory/byte_size.h"
#include "tests/support/expect.h"

using namespace ember;
using test::expect_error_contains;

TEST_CASE("parse_byte_size reads whole and decimal sizes with every unit", "[memory][byte_size]") {
  constexpr size_t KiB = size_t{1} << 10, MiB = size_t{1} << 20, GiB = size_t{1} << 30;
  constexpr size_t kMax = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  struct Good {
    const char* text;
    size_t bytes;
  };
  const std::vector<Good> good = {
      {"0", 0},  // the memory limit reads 0 as no limit
      {"0B", 0},
      {"0.0MiB", 0},
      {"1", 1},
      {"007", 7},
      {"1000000", 1000000},
      {"17B", 17},
      {"4KiB", 4 * KiB},
      {"512MiB", 512 * MiB},
      {"2GiB", 2 * GiB},
      {"4K", 4 * KiB},
      {"4k", 4 * KiB},
      {"64M", 64 * MiB},
      {"3G", 3 * GiB},
      {"10KB", 10000},
      {"3MB", 3000000},
      {"2GB", 2000000000},
      {"1.5GiB", GiB + GiB / 2},
      {"0.5KiB", 512},
      {"2.25MB", 2250000},
      {"1.5B", 1},           // fractions of a byte are dropped
      {"0.1MiB", 104857},    // 104857.6
      {"1.000000000000000000000KiB", KiB},  // trailing zeros are not decimals
      {"9223372036854775807", kMax},
      {"9223372036854775807B", kMax},
      {"8589934591GiB", kMax - (GiB - 1)},  // (2^33 - 1) * 2^30
      {"9223372036.854775807GB", kMax},
  };
  for (const Good& g : good) {
    INFO("'" << g.text << "'");
    CHECK(parse_byte_size(g.text, "--memory-limit") == g.bytes);
  }
}

TEST_CASE("parse_byte_size rejects inf, nan, signs, overflow and trailing text, naming them", "[memory][byte_size]") {
  struct Bad {
    const char* text;
    const char* why;  // a fragment of the reason
  };
  const std::vector<Bad> bad = {
      {"", "empty"},
      {"inf", "does not start with a digit"},
      {"INF", "does not start with a digit"},
      {"infinity", "does not start with a digit"},
      {"nan", "does not start with a digit"},
      {"NaN", "does not start with a digit"},
      {"-1", "does not start with a digit"},
      {"-0", "does not start with a digit"},
      {"+5MiB", "does not start with a digit"},
      {" 5MiB", "does not start with a digit"},
      {".5GiB", "does not start with a digit"},
      {"MiB", "does not start with a digit"},
      {"0x10", "'x10' is not a unit"},
      {"1e30", "'e30' is not a unit"},
      {"1e9", "'e9' is not a unit"},
      {"1.5e3KB", "'e3KB' is not a unit"},
      {"5MiB ", "'MiB ' is not a unit"},
      {"5 MiB", "' MiB' is not a unit"},
      {"5mib", "'mib' is not a unit"},
      {"5MIB", "'MIB' is not a unit"},
      {"5MiBs", "'MiBs' is not a unit"},
      {"5TiB", "'TiB' is not a unit"},
      {"1,5GiB", "',5GiB' is not a unit"},
      {"1_000", "'_000' is not a unit"},
      {"1.", "no digit follows the decimal point"},
      {"1.GiB", "no digit follows the decimal point"},
      {"1..5", "no digit follows the decimal point"},
      {"1.2.3", "'.3' is not a unit"},
      {"0.5B", "less than one byte"},
      {"0.0000000001KB", "less than one byte"},
      {"1.0000000000000000001B", "more than 18 decimals"},
      {"9223372036854775808", "more than 9223372036854775807 bytes"},
      {"18446744073709551616", "more than 9223372036854775807 bytes"},
      {"99999999999999999999999999999999999999999", "more than 9223372036854775807 bytes"},
      {"8589934592GiB", "more than 9223372036854775807 bytes"},  // 2^63
      {"9223372036.854775808GB", "more than 9223372036854775807 bytes"},
      {"1000000000000000000000GB", "more than 9223372036854775807 bytes"},
  };
  for (const Bad& b : bad) {
    INFO("'" << b.text << "'");
    expect_error_contains([&] { parse_byte_size(b.text, "--memory-limit"); },
                          {"--memory-limit", std::string("'") + b.text + "'", b.why, "KiB", "512MiB"});
  }
}
