#include "apps/cli_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace ember::apps {

namespace {

std::string shown(const std::string& text) { return text.empty() ? "nothing" : text; }

// Whole numbers in plain digits with an optional leading minus: no spaces, signs, decimals or exponents.
bool parse_integer(const std::string& text, long long& value) {
  if (text.empty() || text.find_first_not_of("-0123456789") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0' && errno == 0;
}

}  // namespace

CLI::Validator integer_between(int64_t low, int64_t high, const std::string& what) {
  std::ostringstream description;
  if (high == std::numeric_limits<int32_t>::max()) description << (low == 1 ? "POSITIVE" : low == 0 ? "NONNEGATIVE" : "INT");
  else description << "INT in [" << low << " - " << high << "]";
  return CLI::Validator(
      [low, high, what](std::string& text) -> std::string {
        long long value = 0;
        if (!parse_integer(text, value)) return "must be " + what + ", got " + shown(text);
        if (value < low || value > high) {
          std::ostringstream os;
          os << "must be " << what;
          if (high < std::numeric_limits<int32_t>::max()) os << " from " << low << " to " << high;
          else if (value > high) os << " up to " << high;
          os << ", got " << text;
          return os.str();
        }
        // CLI11 converts with base 0, so "010" would silently be 8.
        if (text != std::to_string(value)) return "must be " + what + " written without leading zeros, got " + text;
        return "";
      },
      description.str());
}

CLI::Validator number_between(double low, double high, const std::string& what) {
  return CLI::Validator(
      [low, high, what](std::string& text) -> std::string {
        const bool plain = !text.empty() && text.find_first_not_of("-+.0123456789eE") == std::string::npos;
        char* end = nullptr;
        const double value = plain ? std::strtod(text.c_str(), &end) : 0.0;
        if (!plain || *end != '\0' || !std::isfinite(value) || value < low || value > high)
          return "must be " + what + ", got " + shown(text);
        return "";
      },
      high == std::numeric_limits<double>::max() && low == 0.0 ? "NONNEGATIVE" : "FLOAT in [" + CLI::detail::to_string(low) + " - " + CLI::detail::to_string(high) + "]");
}

CLI::Validator one_of(const std::vector<std::string>& allowed) {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return CLI::Validator(
      [allowed, list](std::string& text) -> std::string {
        for (const std::string& a : allowed)
          if (text == a) return "";
        return "must be one of " + list + "; got " + shown(text);
      },
      "{" + list + "}");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits) std::strtoull(text.c_str(), &end, 10);
        if (!digits || errno != 0) return "must be a whole number from 0 to 18446744073709551615, got " + shown(text);
        return "";
      },
      "");
}

std::string cli_error_text(const CLI::Error& error) {
  std::string text = error.what();
  const size_t colon = text.find(": must ");
  if (text.rfind("--", 0) == 0 && colon != std::string::npos && text.find(' ') > colon) text.erase(colon, 1);
  return text;
}

}  // namespace ember::apps
