#include "memory/byte_size.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace ember {
namespace {

constexpr int kMaxDecimals = 18;  // 10^18 and its products with a unit stay well inside 128 bits

struct Unit {
  const char* name;
  uint64_t bytes;
};

constexpr Unit kUnits[] = {
    {"", 1},  {"B", 1},   {"KiB", uint64_t{1} << 10}, {"MiB", uint64_t{1} << 20}, {"GiB", uint64_t{1} << 30},
    {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"K", uint64_t{1} << 10}, {"k", uint64_t{1} << 10},
    {"M", uint64_t{1} << 20}, {"G", uint64_t{1} << 30},
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void reject(const std::string& text, const char* what, const std::string& why) {
  EMBER_THROW(what << ": cannot read '" << text << "' as a byte size: " << why
                   << "; expected a whole or decimal number with an optional unit B, KiB, MiB, GiB (or K, M, G), "
                      "KB, MB or GB, such as 512MiB, 1.5GiB or 1000000 (0: no limit)");
}

}  // namespace

size_t parse_byte_size(const std::string& text, const char* what) {
  using u128 = unsigned __int128;
  const uint64_t max_bytes = std::min<uint64_t>(static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                                                static_cast<uint64_t>(std::numeric_limits<size_t>::max()));
  if (text.empty()) reject(text, what, "it is empty");
  size_t at = 0;
  // The whole part. Past max_bytes it overflows whatever the unit (every unit is >= 1 byte).
  u128 whole = 0;
  bool too_big = false;
  const size_t whole_begin = at;
  for (; at < text.size() && is_digit(text[at]); ++at) {
    whole = whole * 10 + static_cast<unsigned>(text[at] - '0');
    if (whole > max_bytes) {
      too_big = true;
      whole = max_bytes + 1;  // stays above the limit without overflowing
    }
  }
  if (at == whole_begin) reject(text, what, "it does not start with a digit");
  // The decimals, trailing zeros dropped.
  uint64_t fraction = 0, fraction_scale = 1;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const size_t begin = at;
    while (at < text.size() && is_digit(text[at])) ++at;
    if (at == begin) reject(text, what, "no digit follows the decimal point");
    size_t end = at;
    while (end > begin && text[end - 1] == '0') --end;
    if (static_cast<int>(end - begin) > kMaxDecimals) reject(text, what, "it has more than 18 decimals");
    for (size_t i = begin; i < end; ++i) {
      fraction = fraction * 10 + static_cast<unsigned>(text[i] - '0');
      fraction_scale *= 10;
    }
  }
  const std::string unit = text.substr(at);
  uint64_t scale = 0;
  for (const Unit& u : kUnits)
    if (unit == u.name) scale = u.bytes;
  if (scale == 0) reject(text, what, "'" + unit + "' is not a unit");
  if (too_big) reject(text, what, "it is more than " + std::to_string(max_bytes) + " bytes");
  const u128 bytes = whole * scale + static_cast<u128>(fraction) * scale / fraction_scale;  // fractions of a byte dropped
  if (bytes > max_bytes) reject(text, what, "it is more than " + std::to_string(max_bytes) + " bytes");
  if (bytes == 0 && (whole != 0 || fraction != 0)) reject(text, what, "it is less than one byte");
  return static_cast<size_t>(bytes);
}

}  // namespace ember
