// bench_gemm: the CPU GEMM ladder, from the textbook triple loop to ember's kernel, each step a
// complete and correct C = A B (square, fp32, row-major) and each measured in GFLOP/s and as a
// share of this CPU's fp32 peak, measured at start (kernels/cpu/fp32_peak.h), against OpenBLAS
// timed in the same rounds.
//
//   build-cpu/bench/bench_gemm                               # every step, n = 256..2048
//   build-cpu/bench/bench_gemm --steps=packed,micro --sizes=512,1024 --rounds=3 --no-zoo
//   build-cpu/bench/bench_gemm --steps=none --zoo=resnet20    # only the zoo's products, those with the name
//   env -u OPENBLAS_CORETYPE build-cpu/bench/bench_gemm      # OpenBLAS choosing its own kernels
//
// The steps (docs/kernels.md reads them with measured numbers):
//   naive     three loops i, j, p: one dot product per element of C, B read down its columns
//             (a new cache line per multiply-add)
//   blocked   loops i, p, j: the inner loop runs along rows of B and C, so the compiler vectorises
//             it, and the three loops are cut into blocks that stay in cache
//   packed    BLIS's structure: blocks of A and B copied into panels in the order the inner
//             kernel reads them, and an inner kernel that keeps an 8 x 32 tile of C in a local
//             array for the compiler to hold in registers (plain C++, no intrinsics)
//   micro     ember's kernel (kernels/cpu/gemm_kernels.inc) on one thread: the same loops around a
//             register tile written with intrinsics per instruction set (EMBER_CPU_ISA)
//   threaded  the same on every OpenMP thread (the product cut into one part per thread)
//   openblas  OpenBLAS (the EMBER_CPU_GEMM=openblas provider), on one thread and on every thread,
//             with whatever kernels OPENBLAS_CORETYPE gives it
// The first three live here, as teaching code; the last steps call the library (no copies).
//
// A second table times the products the zoo's convolutions make (im2col's and Winograd's, on
// one thread as each convolution thread runs them, A packed once where the convolution packs it
// once), ours against OpenBLAS; the flag --no-zoo leaves it out.
// Each cell is the median over the rounds (each step times one product per size per round, the
// steps interleaved, so drift in the machine's load hits them alike) of the best of a few
// back-to-back products; the naive and blocked steps stop at --slow-max (default 512).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parse_integer.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/fp32_peak.h"
#include "kernels/cpu/gemm.h"
#include "kernels/providers.h"

namespace {

using ember::kernels::cpu::gemm;

// Step 1: one dot product per element.
void naive(int64_t n, const float* a, const float* b, float* c) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < n; ++p) sum += a[i * n + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}

// Step 2: i, p, j order (row of C += a_ip * row of B: unit stride, vectorised) in cache blocks.
void blocked(int64_t n, const float* a, const float* b, float* c) {
  constexpr int64_t kBi = 64, kBp = 256, kBj = 512;  // a 256 x 512 block of B is 512 KiB: L2
  std::fill(c, c + n * n, 0.0f);
  for (int64_t jj = 0; jj < n; jj += kBj)
    for (int64_t pp = 0; pp < n; pp += kBp)
      for (int64_t ii = 0; ii < n; ii += kBi)
        for (int64_t i = ii; i < std::min(ii + kBi, n); ++i)
          for (int64_t p = pp; p < std::min(pp + kBp, n); ++p) {
            const float a_ip = a[i * n + p];
            const float* b_row = b + p * n;
            float* c_row = c + i * n;
            for (int64_t j = jj; j < std::min(jj + kBj, n); ++j) c_row[j] += a_ip * b_row[j];
          }
}

// Step 3: packed panels and a tile of C in a local array. kMr x kNr accumulators, a kKc-deep
// panel of B (kKc x kNr floats, 32 KiB) reused from L1 by every panel of A in a kMc-row block.
constexpr int64_t kMr = 8, kNr = 32, kKc = 256, kMc = 128, kNc = 2048;

void pack_a_block(int64_t n, const float* a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  for (int64_t r = 0; r < mc; r += kMr)  // panel [kc][kMr]: column p of the panel is contiguous
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t i = 0; i < kMr; ++i)
        dst[r * kc + p * kMr + i] = r + i < mc ? a[(i0 + r + i) * n + p0 + p] : 0.0f;
}

void pack_b_block(int64_t n, const float* b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  for (int64_t q = 0; q < nc; q += kNr)  // panel [kc][kNr]: row p of the panel is contiguous
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = 0; j < kNr; ++j) dst[q * kc + p * kNr + j] = q + j < nc ? b[(p0 + p) * n + j0 + q + j] : 0.0f;
}

void tile_plain(int64_t kc, const float* a, const float* b, float* c, int64_t n, int64_t rows, int64_t cols) {
  float acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p)
    for (int64_t i = 0; i < kMr; ++i)
      for (int64_t j = 0; j < kNr; ++j) acc[i][j] += a[p * kMr + i] * b[p * kNr + j];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * n + j] += acc[i][j];
}

void packed(int64_t n, const float* a, const float* b, float* c) {
  std::vector<float> ap(static_cast<size_t>(kMc * kKc)), bp(static_cast<size_t>(kKc * kNc));
  std::fill(c, c + n * n, 0.0f);
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < n; pc += kKc) {
      const int64_t kc = std::min(kKc, n - pc);
      pack_b_block(n, b, pc, kc, jc, nc, bp.data());
      for (int64_t ic = 0; ic < n; ic += kMc) {
        const int64_t mc = std::min(kMc, n - ic);
        pack_a_block(n, a, ic, mc, pc, kc, ap.data());
        for (int64_t jr = 0; jr < nc; jr += kNr)
          for (int64_t ir = 0; ir < mc; ir += kMr)
            tile_plain(kc, ap.data() + ir * kc, bp.data() + jr * kc, c + (ic + ir) * n + jc + jr, n,
                       std::min(kMr, mc - ir), std::min(kNr, nc - jr));
      }
    }
  }
}

// Steps 4 and 5, and OpenBLAS: the library's GEMM with a provider, on `threads` threads.
void library(int64_t n, const float* a, const float* b, float* c, ember::kernels::CpuGemmProvider provider,
             int threads) {
  const ember::kernels::CpuGemmScope use(provider);
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  gemm<float>(n, n, n, {a, n}, {b, n}, {c, n});
  omp_set_num_threads(previous);
}

// One product a zoo convolution makes per image (or per group of Winograd tiles):
// C [m, n] = op(A) [m, k] op(B) [k, n], where the operands are stored as the convolution stores
// them; `packed` when the convolution packs A once for the whole batch.
struct ZooProduct {
  const char* name;
  int64_t m, n, k;
  bool ta, tb, packed;
  bool padded_rows = false;  // A^T's rows padded as Winograd's weight gradient pads dM's
};

// The stored row of a Winograd weight gradient's dM [tiles][ov]: OC rounded up to what the kernel
// reads in place (gemm_transposed_a_rows), then to whole 8-float vectors.
int64_t winograd_dm_row(int64_t oc) { return (ember::kernels::cpu::gemm_transposed_a_rows<float>(oc) + 7) / 8 * 8; }

// im2col: forward W [OC, CKK] x cols [CKK, P]; input gradient W^T x dy [OC, P]; weight gradient
// dy [OC, P] x cols^T. Winograd F(2x2, 3x3): per tap U [OC, C] x V [C, tiles], and for the
// weight gradient dM^T x V with both stored channels last, dM [tiles, OC rounded up] and
// V [tiles, C] (about 192 tiles per group; kernels/cpu/conv2d_winograd_weight_grad.cpp).
const std::vector<ZooProduct> kZooProducts = {
    {"lenet5.conv2 input grad (im2col)", 150, 100, 16, true, false, true},
    {"convnet.conv1 forward (im2col)", 32, 784, 9, false, false, true},
    {"convnet.conv1 weight grad (im2col)", 32, 9, 784, false, true, false},
    {"convnet.conv2 forward (winograd)", 32, 196, 32, false, false, true},
    {"convnet.conv2 weight grad (winograd)", 32, 32, 196, true, false, false, true},
    {"convnet.conv4 forward (winograd)", 64, 196, 64, false, false, true},
    {"convnet.conv4 weight grad (winograd)", 64, 64, 196, true, false, false, true},
    {"resnet20.s1 forward (winograd)", 16, 196, 16, false, false, true},
    {"resnet20.s1 weight grad (winograd)", 16, 16, 196, true, false, false, true},
    {"resnet20.s2 stride 2 forward (im2col)", 32, 196, 144, false, false, true},
    {"resnet20.s2 stride 2 input grad (im2col)", 144, 196, 32, true, false, true},
    {"resnet20.s2 stride 2 weight grad (im2col)", 32, 144, 196, false, true, false},
    {"resnet20.s3 stride 2 forward (im2col)", 64, 49, 288, false, false, true},
    {"resnet20.s3 stride 2 weight grad (im2col)", 64, 288, 49, false, true, false},
    {"resnet20.s3 forward (winograd)", 64, 192, 64, false, false, true},
    {"resnet20.s3 weight grad (winograd)", 64, 64, 192, true, false, false, true},
    {"resnet20.shortcut 1x1 stride 2 forward", 32, 196, 16, false, false, true},
};

// Floats from a 64-byte line, where the zoo's convolutions find their operands: tensors and
// column buffers come from ember's allocator on a line (ConvNet's and ResNet-20's im2col chunks
// a whole number of lines apart). std::vector's large blocks start 16 bytes past a line, and a
// product whose rows straddle lines loads twice the lines (32 x 9 x 784, B^T, on a Zen 5: ember
// 184 vs 145 GFLOP/s, OpenBLAS 145-150 vs 126-135).
class LineAlignedFloats {
 public:
  explicit LineAlignedFloats(size_t size) : storage_(size + 15), size_(size) {}
  float* data() {
    const uintptr_t address = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + (64 - address % 64) % 64 / sizeof(float);
  }
  float* begin() { return data(); }
  float* end() { return data() + size_; }

 private:
  std::vector<float> storage_;
  size_t size_;
};

struct Step {
  std::string name;
  int threads;
  bool slow;  // naive and blocked: sizes up to --slow-max only
  std::function<void(int64_t, const float*, const float*, float*)> run;
};

std::vector<int64_t> parse_list(const std::string& text, const char* what) {
  std::vector<int64_t> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) out.push_back(ember::parse_integer(item, what, 1, 16384));
  return out;
}

// Seconds of one product: the best of repetitions for ~20 ms.
double time_best(const std::function<void()>& fn) {
  double best = 1e30, total = 0.0;
  for (int rep = 0; rep < 100000 && (rep < 3 || total < 0.02); ++rep) {
    const double t0 = omp_get_wtime();
    fn();
    const double seconds = omp_get_wtime() - t0;
    best = std::min(best, seconds);
    total += seconds;
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// The largest |got - want| in units of the bound both obey: each is a sum of n products in some
// order, within gamma(n) = n u / (1 - n u) (u = 2^-24) of the exact sum times the sum of the
// terms' magnitudes (abs_product = |A| |B|), so the two differ by at most twice that. Above 1:
// a step computes something else.
double error_in_bounds(const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& abs_product,
                       int64_t n) {
  const double u = std::ldexp(1.0, -24), gamma = n * u / (1.0 - n * u);
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = 2.0 * gamma * abs_product[i] + std::numeric_limits<float>::denorm_min();
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / bound);
  }
  return worst;
}

// The zoo's products on one thread, ember (A packed once where the convolution does) and
// OpenBLAS interleaved, medians over the rounds.
void zoo_table(int rounds, double peak1, const std::string& filter) {
  using ember::kernels::CpuGemmProvider;
  const int previous = omp_get_max_threads();
  omp_set_num_threads(1);
  std::printf("\nThe zoo's convolution products, one thread (as each convolution thread runs them), medians of %d rounds:\n\n", rounds);
  std::printf("| product | m x n x k | ember GFLOP/s | of peak | OpenBLAS GFLOP/s | ember / OpenBLAS |\n|---|---|--:|--:|--:|--:|\n");
  std::mt19937 gen(2);
  std::normal_distribution<float> normal;
  for (const ZooProduct& z : kZooProducts) {
    if (std::string(z.name).find(filter) == std::string::npos) continue;
    const int64_t lda = z.ta ? (z.padded_rows ? winograd_dm_row(z.m) : z.m) : z.k;
    LineAlignedFloats a(static_cast<size_t>(z.ta ? lda * z.k : z.m * z.k)), b(static_cast<size_t>(z.k * z.n)),
        c(static_cast<size_t>(z.m * z.n));
    for (float& x : a) x = normal(gen);
    for (float& x : b) x = normal(gen);
    const ember::kernels::cpu::MatrixRef<float> ar{a.data(), lda, z.ta}, br{b.data(), z.tb ? z.k : z.n, z.tb};
    const ember::kernels::cpu::GemmOutput<float> cr{c.data(), z.n};
    std::vector<double> ours, theirs;
    for (int round = 0; round < rounds; ++round) {
      {
        const ember::kernels::CpuGemmScope use(CpuGemmProvider::ember);
        if (z.packed) {
          const ember::kernels::cpu::PackedA<float> packed(z.m, z.k, ar);
          ours.push_back(time_best([&] { gemm(packed, z.n, br, cr); }));
        } else {
          ours.push_back(time_best([&] { gemm<float>(z.m, z.n, z.k, ar, br, cr); }));
        }
      }
      if (ember::kernels::cpu_gemm_provider_available(CpuGemmProvider::openblas)) {
        const ember::kernels::CpuGemmScope use(CpuGemmProvider::openblas);
        theirs.push_back(time_best([&] { gemm<float>(z.m, z.n, z.k, ar, br, cr); }));
      }
    }
    const double flops = 2.0 * z.m * z.n * z.k, g = flops / median(ours) * 1e-9;
    std::printf("| %s | %lld x %lld x %lld%s%s | %.1f | %.0f%% |", z.name, static_cast<long long>(z.m),
                static_cast<long long>(z.n), static_cast<long long>(z.k), z.ta ? " (A^T)" : "", z.tb ? " (B^T)" : "", g,
                100.0 * g / peak1);
    if (theirs.empty()) std::printf(" - | - |\n");
    else std::printf(" %.1f | %.2fx |\n", flops / median(theirs) * 1e-9, median(theirs) / median(ours));
  }
  omp_set_num_threads(previous);
}

int run(int argc, char** argv) {
  std::vector<int64_t> sizes = {256, 512, 1024, 2048};
  std::string only;
  int rounds = 5, threads = omp_get_max_threads();
  int64_t slow_max = 512;
  bool zoo = true;
  std::string zoo_filter;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* flag) { return arg.substr(std::strlen(flag)); };
    if (arg.rfind("--sizes=", 0) == 0) sizes = parse_list(value("--sizes="), "--sizes");
    else if (arg.rfind("--steps=", 0) == 0) only = "," + value("--steps=") + ",";
    else if (arg.rfind("--rounds=", 0) == 0) rounds = static_cast<int>(ember::parse_integer(value("--rounds="), "--rounds", 1, 100));
    else if (arg.rfind("--threads=", 0) == 0) threads = static_cast<int>(ember::parse_integer(value("--threads="), "--threads", 1, 1024));
    else if (arg.rfind("--slow-max=", 0) == 0) slow_max = ember::parse_integer(value("--slow-max="), "--slow-max", 1, 16384);
    else if (arg == "--no-zoo") zoo = false;
    else if (arg.rfind("--zoo=", 0) == 0) zoo_filter = value("--zoo=");
    else EMBER_THROW("unknown argument '" << arg << "' (--sizes=, --steps=, --rounds=, --threads=, --slow-max=, --zoo=, --no-zoo)");
  }
  using ember::kernels::CpuGemmProvider;
  const bool have_openblas = ember::kernels::cpu_gemm_provider_available(CpuGemmProvider::openblas);
  std::vector<Step> steps = {
      {"naive", 1, true, naive},
      {"blocked", 1, true, blocked},
      {"packed", 1, false, packed},
      {"micro", 1, false, [](int64_t n, const float* a, const float* b, float* c) { library(n, a, b, c, CpuGemmProvider::ember, 1); }},
  };
  if (threads > 1)
    steps.push_back({"threaded", threads, false,
                     [threads](int64_t n, const float* a, const float* b, float* c) {
                       library(n, a, b, c, CpuGemmProvider::ember, threads);
                     }});
  if (have_openblas) {
    steps.push_back({"openblas", 1, false,
                     [](int64_t n, const float* a, const float* b, float* c) { library(n, a, b, c, CpuGemmProvider::openblas, 1); }});
    if (threads > 1)
      steps.push_back({"openblas", threads, false, [threads](int64_t n, const float* a, const float* b, float* c) {
                         library(n, a, b, c, CpuGemmProvider::openblas, threads);
                       }});
  }
  steps.erase(std::remove_if(steps.begin(), steps.end(),
                             [&](const Step& s) { return !only.empty() && only.find("," + s.name + ",") == std::string::npos; }),
              steps.end());

  const double peak1 = ember::kernels::cpu::measured_fp32_peak_gflops(1);
  const double peak_all = ember::kernels::cpu::measured_fp32_peak_gflops(threads);
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  std::printf("bench_gemm: C = A B, square fp32; EMBER_CPU_ISA=%s, OPENBLAS_CORETYPE=%s; medians of %d rounds\n",
              ember::kernels::cpu::cpu_isa_name(ember::kernels::cpu::cpu_isa()), core != nullptr ? core : "(unset)",
              rounds);
  std::printf("fp32 peak measured: %.0f GFLOP/s on 1 thread, %.0f on %d\n\n", peak1, peak_all, threads);

  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::map<std::pair<size_t, int64_t>, std::vector<double>> seconds;  // (step, n) -> one per round
  if (steps.empty()) sizes.clear();
  for (int round = 0; round < rounds; ++round)
    for (int64_t n : sizes) {
      std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size()), reference, abs_product;
      for (float& x : a) x = normal(gen);
      for (float& x : b) x = normal(gen);
      for (size_t s = 0; s < steps.size(); ++s) {
        if (steps[s].slow && n > slow_max) continue;
        seconds[{s, n}].push_back(time_best([&] { steps[s].run(n, a.data(), b.data(), c.data()); }));
        if (round > 0) continue;
        if (reference.empty()) {
          reference.resize(a.size());
          abs_product.resize(a.size());
          library(n, a.data(), b.data(), reference.data(), CpuGemmProvider::ember, 1);
          std::vector<float> abs_a(a.size()), abs_b(b.size());
          std::transform(a.begin(), a.end(), abs_a.begin(), [](float x) { return std::fabs(x); });
          std::transform(b.begin(), b.end(), abs_b.begin(), [](float x) { return std::fabs(x); });
          library(n, abs_a.data(), abs_b.data(), abs_product.data(), CpuGemmProvider::ember, 1);
        }
        const double excess = error_in_bounds(c, reference, abs_product, n);
        EMBER_CHECK(excess <= 1.0, "bench_gemm: step " << steps[s].name << " at n = " << n
                                                       << " differs from ember's kernel by " << excess
                                                       << " times the rounding bound");
      }
    }

  if (!steps.empty()) {
    std::printf("| step | threads |");
    for (int64_t n : sizes) std::printf(" n = %lld GFLOP/s | of peak |", static_cast<long long>(n));
    if (have_openblas) std::printf(" vs OpenBLAS (same threads) |");
    std::printf("\n|---|--:|");
    for (size_t i = 0; i < sizes.size(); ++i) std::printf("--:|--:|");
    if (have_openblas) std::printf("---|");
    std::printf("\n");
    const auto gflops = [&](size_t s, int64_t n) {
      const auto it = seconds.find({s, n});
      if (it == seconds.end()) return 0.0;
      return 2.0 * n * n * n / median(it->second) * 1e-9;
    };
    for (size_t s = 0; s < steps.size(); ++s) {
      std::printf("| %s | %d |", steps[s].name.c_str(), steps[s].threads);
      std::string ratios;
      for (int64_t n : sizes) {
        const double g = gflops(s, n);
        if (g == 0.0) {
          std::printf(" - | - |");
          continue;
        }
        std::printf(" %.1f | %.0f%% |", g, 100.0 * g / (steps[s].threads == 1 ? peak1 : peak_all));
        for (size_t o = 0; o < steps.size(); ++o)
          if (steps[o].name == "openblas" && steps[o].threads == steps[s].threads && gflops(o, n) > 0.0) {
            char cell[32];
            std::snprintf(cell, sizeof cell, "%s%.2fx", ratios.empty() ? "" : " ", g / gflops(o, n));
            ratios += cell;
          }
      }
      if (have_openblas) std::printf(" %s |", ratios.c_str());
      std::printf("\n");
    }
  }
  if (zoo) zoo_table(rounds, peak1, zoo_filter);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "bench_gemm: %s\n", e.what());
    return 2;
  }
}
