// The CPU GEMM's entry points (kernels/cpu/gemm.h): the provider (EMBER_CPU_GEMM), the
// instruction set (cpu_isa()), the thread split, and OpenBLAS's side. Policy:
//   - ember's kernels (kernels/cpu/gemm_kernels.inc) for f32 on AVX-512 or AVX2 + FMA; the
//     portable kernel for f32 under EMBER_CPU_ISA=baseline and for f64 (gradcheck's dtype);
//   - outside an OpenMP parallel region, a product of at least kThreadedMacs multiply-adds is
//     cut into one part per thread along the dimension with more micro-tiles (columns when
//     equal: then each thread packs the whole A, the smaller operand when m <= n), each part
//     a whole product of its own with its own packed panels; no barriers, no shared buffers;
//   - inside a parallel region (a convolution's per-thread images) it runs on the caller's thread.
// The OpenBLAS provider maps the operands as Eigen matrices (EIGEN_USE_BLAS: one sgemm/dgemm
// call for every product that is not tiny), as matmul and the convolutions did before; a build
// without OpenBLAS has no such provider (kernels/providers.h refuses it) and no Eigen code here.
#include "kernels/cpu/gemm.h"

#ifdef EMBER_HAVE_OPENBLAS
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 in Eigen's AVX-512 code
#endif
#include <Eigen/Core>
#endif

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "core/error.h"
#include "core/simulation.h"
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/parallel.h"
#include "kernels/providers.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::kernels::cpu {
namespace {

// Below this many multiply-adds a second thread costs more than it saves (a fork and join is a
// few microseconds; 2^20 multiply-adds take ~10 us on one AVX-512 core).
constexpr double kThreadedMacs = 1 << 20;

// cpu_product_flops's count, one slot per OpenMP thread number on a cache line of its own. One
// counter, bumped by every thread at every product (30,755 in a ResNet-20 step), bounced its
// line between the cores, and with it cpu_isa()'s slot beside it, which every product reads
// (0.7% of a two-thread ResNet-20 run's samples were that read).
struct alignas(64) FlopSlot {
  std::atomic<int64_t> flops{0};
};
constexpr int kFlopSlots = 64;
FlopSlot flop_slots[kFlopSlots];

void add_product_flops(int64_t flops) {
  flop_slots[omp_get_thread_num() % kFlopSlots].flops.fetch_add(flops, std::memory_order_relaxed);
}

// One instruction set's kernel for T.
template <class T>
struct Kernel {
  GemmBlocking blocking;
  void (*run)(const GemmProblem<T>&);
  void (*pack_a)(int64_t, int64_t, const T*, int64_t, bool, T*);
};

template <class T>
Kernel<T> kernel_for(CpuIsa isa) {
#ifdef EMBER_X86_KERNELS
  if constexpr (std::is_same_v<T, float>) {
    if (isa == CpuIsa::avx512) return {gemm_blocking_avx512(), gemm_avx512, gemm_pack_a_avx512};
    if (isa == CpuIsa::avx2) return {gemm_blocking_avx2(), gemm_avx2, gemm_pack_a_avx2};
  }
#endif
  (void)isa;
  return {gemm_blocking_portable<T>(), gemm_portable<T>, gemm_pack_a_portable<T>};
}

// Rows [i0, i1) of a product (i0 a multiple of mr when A is packed).
template <class T>
GemmProblem<T> rows_of(GemmProblem<T> g, int64_t i0, int64_t i1) {
  if (g.packed_a != nullptr) g.packed_row0 += i0;
  else g.a += g.transpose_a ? i0 : i0 * g.lda;
  if (g.row_bias != nullptr) g.row_bias += i0;
  g.c += i0 * g.ldc;
  g.m = i1 - i0;
  return g;
}

// Columns [j0, j1) of a product.
template <class T>
GemmProblem<T> columns_of(GemmProblem<T> g, int64_t j0, int64_t j1) {
  g.b += g.transpose_b ? j0 * g.ldb : j0;
  g.c += j0;
  g.n = j1 - j0;
  return g;
}

template <class T>
void run_ember(const Kernel<T>& kernel, const GemmProblem<T>& g) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t tiles_m = (g.m + kernel.blocking.mr - 1) / kernel.blocking.mr;
  const int64_t tiles_n = (g.n + kernel.blocking.nr - 1) / kernel.blocking.nr;
  const double macs = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (threads == 1 || macs < kThreadedMacs || std::max(tiles_m, tiles_n) < 2) {
    kernel.run(g);
    return;
  }
  const bool by_columns = tiles_n > tiles_m || (tiles_n == tiles_m && g.m <= g.n);
  const int64_t tiles = by_columns ? tiles_n : tiles_m, step = by_columns ? kernel.blocking.nr : kernel.blocking.mr;
  const int64_t parts = std::min<int64_t>(threads, tiles);
  parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t begin = tiles * p / parts * step, end = std::min(by_columns ? g.n : g.m, tiles * (p + 1) / parts * step);
      kernel.run(by_columns ? columns_of(g, begin, end) : rows_of(g, begin, end));
    }
  });
}

#ifdef EMBER_HAVE_OPENBLAS
// OpenBLAS's side: the operands as Eigen maps; Eigen hands the product to sgemm/dgemm.
template <class T>
void run_openblas(const GemmProblem<T>& g) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  using ConstMap = Eigen::Map<const Matrix, 0, Stride>;
  Eigen::Map<Matrix, 0, Stride> out(g.c, g.m, g.n, Stride(g.ldc));
  const ConstMap a(g.a, g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k, Stride(g.lda));
  const ConstMap b(g.b, g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n, Stride(g.ldb));
  const auto assign = [&](const auto& product) {
    if (g.beta == T(0)) {
      out.noalias() = product;
    } else {
      if (g.beta != T(1)) out *= g.beta;
      out.noalias() += product;
    }
  };
  if (g.k == 0) {
    if (g.beta == T(0)) out.setZero();
    else out *= g.beta;
  } else if (!g.transpose_a && !g.transpose_b) {  // each a distinct expression type: the flags reach BLAS, no copies
    assign(a * b);
  } else if (g.transpose_a && !g.transpose_b) {
    assign(a.transpose() * b);
  } else if (!g.transpose_a && g.transpose_b) {
    assign(a * b.transpose());
  } else {
    assign(a.transpose() * b.transpose());
  }
  if (g.row_bias != nullptr) out.colwise() += Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(g.row_bias, g.m);
}
#endif

template <class T>
GemmProblem<T> problem(int64_t m, int64_t n, int64_t k, MatrixRef<T> a, MatrixRef<T> b, GemmOutput<T> c) {
  GemmProblem<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.data;
  g.lda = a.ld;
  g.transpose_a = a.transposed;
  g.b = b.data;
  g.ldb = b.ld;
  g.transpose_b = b.transposed;
  g.c = c.data;
  g.ldc = c.ld;
  g.beta = c.beta;
  g.row_bias = c.row_bias;
  return g;
}

template <class T>
void run(const GemmProblem<T>& g) {
  if (g.m <= 0 || g.n <= 0) return;
  add_product_flops(2 * g.m * g.n * g.k);
#ifdef EMBER_HAVE_OPENBLAS
  if (cpu_gemm_provider() == CpuGemmProvider::openblas && g.packed_a == nullptr) return run_openblas(g);
#endif
  run_ember(kernel_for<T>(cpu_isa()), g);
}

}  // namespace

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<T> a, MatrixRef<T> b, GemmOutput<T> c) {
  run(problem(m, n, k, a, b, c));
}

template <class T>
PackedA<T>::PackedA(int64_t m, int64_t k, MatrixRef<T> a) : PackedA(m, k, a, /*pack_now=*/true) {}

template <class T>
PackedA<T>::PackedA(int64_t m, int64_t k, MatrixRef<T> a, bool pack_now) : m_(m), k_(k), a_(a), isa_(cpu_isa()) {
  if (cpu_gemm_provider() == CpuGemmProvider::openblas) return;
  {
    CategoryScope scope(MemoryCategory::workspace);
    packed_ = empty(Shape{packed_a_size(kernel_for<T>(isa_).blocking, m, k)}, TensorOptions().dtype(DTypeOf<T>::value));
  }
  if (!simulating()) packed_data_ = packed_.data<T>();
  if (pack_now) pack();
}

template <class T>
void PackedA<T>::pack() {
  if (packed_data_ == nullptr || m_ == 0 || k_ == 0) return;
  kernel_for<T>(isa_).pack_a(m_, k_, a_.data, a_.ld, a_.transposed, packed_data_);
}

template <class T>
std::vector<PackedA<T>> pack_each(int64_t m, int64_t k, const std::vector<MatrixRef<T>>& operands) {
  std::vector<PackedA<T>> packed;
  packed.reserve(operands.size());
  for (const MatrixRef<T>& a : operands) packed.push_back(PackedA<T>(m, k, a, /*pack_now=*/false));
  if (simulating()) return packed;  // (asked here: simulation is the calling thread's state)
  parallel_for(static_cast<int64_t>(packed.size()), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, m * k)),
               [&](int64_t i0, int64_t i1) {
                 for (int64_t i = i0; i < i1; ++i) packed[static_cast<size_t>(i)].pack();
               });
  return packed;
}

template <class T>
const T* PackedA<T>::packed() const {
  return packed_data_;
}

template <class T>
void gemm(const PackedA<T>& a, int64_t n, MatrixRef<T> b, GemmOutput<T> c) {
  GemmProblem<T> g = problem(a.rows(), n, a.depth(), a.operand(), b, c);
  if (a.packed() != nullptr) {
    EMBER_CHECK(a.isa() == cpu_isa(), "gemm: A was packed for " << cpu_isa_name(a.isa()) << ", but the kernels now run "
                                                                 << cpu_isa_name(cpu_isa()));
    g.packed_a = a.packed();
    g.packed_rows = packed_a_size(kernel_for<T>(a.isa()).blocking, a.rows(), 1);
  }
  run(g);
}

template <class T>
int64_t gemm_transposed_a_rows(int64_t m) {
  const int64_t rows = packed_a_size(kernel_for<T>(cpu_isa()).blocking, m, 1);  // m rounded up to mr
  return rows * static_cast<int64_t>(sizeof(T)) <= kGemmInPlaceRowBytes ? rows : m;
}

int64_t cpu_product_flops() {
  int64_t total = 0;
  for (const FlopSlot& slot : flop_slots) total += slot.flops.load(std::memory_order_relaxed);
  return total;
}
void count_product_flops(int64_t flops) { add_product_flops(flops); }

template void gemm<float>(int64_t, int64_t, int64_t, MatrixRef<float>, MatrixRef<float>, GemmOutput<float>);
template void gemm<double>(int64_t, int64_t, int64_t, MatrixRef<double>, MatrixRef<double>, GemmOutput<double>);
template int64_t gemm_transposed_a_rows<float>(int64_t);
template int64_t gemm_transposed_a_rows<double>(int64_t);
template class PackedA<float>;
template class PackedA<double>;
template std::vector<PackedA<float>> pack_each<float>(int64_t, int64_t, const std::vector<MatrixRef<float>>&);
template std::vector<PackedA<double>> pack_each<double>(int64_t, int64_t, const std::vector<MatrixRef<double>>&);
template void gemm<float>(const PackedA<float>&, int64_t, MatrixRef<float>, GemmOutput<float>);
template void gemm<double>(const PackedA<double>&, int64_t, MatrixRef<double>, GemmOutput<double>);

}  // namespace ember::kernels::cpu
