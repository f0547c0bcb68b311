#pragma once
// RAII scope that tags every allocation made on this thread with a category:
//
//   { ember::CategoryScope scope(ember::MemoryCategory::parameter);
//     weight = ember::randn({out, in}); }          // counted as parameter bytes
//
// Scopes nest; the innermost wins. Without a scope, bytes are "temporary".
#include "core/allocator.h"

namespace ember {

MemoryCategory current_category();

class CategoryScope {
 public:
  explicit CategoryScope(MemoryCategory category);
  ~CategoryScope();
  CategoryScope(const CategoryScope&) = delete;
  CategoryScope& operator=(const CategoryScope&) = delete;

 private:
  MemoryCategory previous_;
};

}  // namespace ember
