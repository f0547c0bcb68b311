#include "core/parse_integer.h"

#include "core/error.h"

namespace ember {

bool read_decimal(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const int digit = c - '0';
    if (n > (INT64_MAX - digit) / 10) return false;
    n = n * 10 + digit;
  }
  *value = n;
  return true;
}

int64_t parse_integer(const std::string& text, const char* what, int64_t min, int64_t max) {
  int64_t n = 0;
  EMBER_CHECK(read_decimal(text, &n) && n >= min && n <= max,
              what << ": cannot read '" << text << "' as a whole number from " << min << " to " << max
                   << " (plain decimal digits, no sign, spaces or exponent)");
  return n;
}

}  // namespace ember
