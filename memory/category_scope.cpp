#include "memory/category_scope.h"

namespace ember {
namespace {
thread_local MemoryCategory tls_category = MemoryCategory::temporary;
}

MemoryCategory current_category() { return tls_category; }

CategoryScope::CategoryScope(MemoryCategory category) : previous_(tls_category) { tls_category = category; }
CategoryScope::~CategoryScope() { tls_category = previous_; }

}  // namespace ember
