#pragma once
// with_bad_alloc_as_error: a reader's boundary, where a failed host allocation (a
// std::bad_alloc, e.g. for sizes a file declares) becomes an ember::Error naming the
// reader and the file, so its callers see one error type.
//
//   return with_bad_alloc_as_error("read_idx: " + path, [&] { return parse_idx(bytes, path); });
#include <new>
#include <string>

#include "core/error.h"

namespace ember {

template <class Fn>
auto with_bad_alloc_as_error(const std::string& where, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    EMBER_THROW(where << ": out of memory (a host allocation failed)");
  }
}

}  // namespace ember
