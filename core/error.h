#pragma once
// ember::Error is the one exception type for bad input and failed checks; its
// message says what went wrong and why. Nothing in ember calls exit or abort.
//
//   EMBER_CHECK(a.shape() == b.shape(), "add: shapes " << a.shape() << " and " << b.shape() << " differ");
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {
[[noreturn]] void throw_error(const std::string& message, const char* file, int line);
}  // namespace detail

}  // namespace ember

#define EMBER_THROW(message_stream)                                        \
  do {                                                                     \
    std::ostringstream ember_error_stream_;                                \
    ember_error_stream_ << message_stream;                                 \
    ::ember::detail::throw_error(ember_error_stream_.str(), __FILE__, __LINE__); \
  } while (0)

#define EMBER_CHECK(condition, message_stream) \
  do {                                         \
    if (!(condition)) EMBER_THROW(message_stream); \
  } while (0)
