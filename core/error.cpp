#include "core/error.h"

namespace ember::detail {

void throw_error(const std::string& message, const char* /*file*/, int /*line*/) {
  throw Error(message);
}

}  // namespace ember::detail
