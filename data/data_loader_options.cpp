#include "data/data_loader_options.h"

#include "core/error.h"

namespace ember::data {

DataLoaderOptions& DataLoaderOptions::workers(int64_t n) {
  EMBER_CHECK(n == 0 || n == 1, "DataLoaderOptions: workers must be 0 (no background thread) or 1 (the "
                                "prefetch thread), got " << n);
  prefetch_ = n == 1;
  return *this;
}

}  // namespace ember::data
