#include "kernels/threads.h"

#include <omp.h>

#include "core/error.h"

namespace ember {

void set_num_threads(int n) {
  EMBER_CHECK(n >= 1, "set_num_threads: the number of threads must be >= 1, got " << n);
  omp_set_num_threads(n);
}

int get_num_threads() { return omp_get_max_threads(); }

}  // namespace ember
