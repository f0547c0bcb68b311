#pragma once
// Whole numbers written by people (byte sizes have their own reader, memory/byte_size.h):
// the N of `cuda:N` and `--checkpoint N`, environment variables such as EMBER_BENCH_CPU_MAX_SIZE.
//
//   int64_t n = 0;
//   if (!ember::read_decimal("12", &n)) ...                           // the caller words the error
//   int64_t k = ember::parse_integer("4", "EMBER_X", 1, 1000);          // 4; throws naming EMBER_X, the text, [1, 1000]
//
// A number is plain decimal digits (leading zeros allowed) and nothing else: no sign, space,
// hex or octal prefix, exponent, inf/nan or trailing text. A value above INT64_MAX is not a
// number either: it is never clamped or wrapped.
#include <cstdint>
#include <string>

namespace ember {

// False (and *value unchanged) when `text` is not a number as above.
bool read_decimal(const std::string& text, int64_t* value);
// The number in `text`, which must lie in [min, max] (0 <= min <= max).
int64_t parse_integer(const std::string& text, const char* what, int64_t min, int64_t max);

}  // namespace ember
