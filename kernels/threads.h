#pragma once
// The CPU threads ember's kernels run on, libtorch's torch::set_num_threads and
// torch::get_num_threads. The CPU kernels and OpenBLAS (its OpenMP build) share one OpenMP
// pool (kernels/cpu/parallel.h), so this sets both.
//
//   ember::set_num_threads(1);            // deterministic timing on a shared machine
//   int n = ember::get_num_threads();     // OMP_NUM_THREADS, or every core, by default
//
// Like OpenMP's omp_set_num_threads, which it calls, it sets the threads of parallel regions
// started from the calling thread (the training loop's); a thread started afterwards (the data
// loader's prefetch thread) keeps the default. libtorch's sets its intra-op pool for every thread.
namespace ember {

// n >= 1; throws naming set_num_threads otherwise.
void set_num_threads(int n);
// The threads a parallel region started from this thread runs on.
int get_num_threads();

}  // namespace ember
