// bench_bandwidth: how fast one thread (or each of several) streams through memory, by working-set
// size: the other half of a roofline next to the fp32 peak (kernels/cpu/fp32_peak.h). A training
// step's passes that are not products (batch norm, the Winograd transforms' copies, im2col, the
// gradient sums) move a few bytes per flop, so what they can reach is set here, not by the FMA
// units; docs/kernels.md reads ResNet-20's step against it.
//
//   build-cpu/bench/bench_bandwidth                       # 1 thread, 0.5..128 MiB, 5 rounds
//   build-cpu/bench/bench_bandwidth --threads=2 --sizes=3,64 --rounds=7
//
// Two kernels per size, each thread on its own arrays (sized so all of them together are the
// working set; multiples of 64 floats), timed over passes that add up to at least 512 MiB moved:
//   read      s += a[i]                       (four independent vector sums: loads only)
//   triad     c[i] = a[i] + s * b[i]          (two reads and a write per element, as a
//                                             gradient pass or batch norm's backward does)
// GB/s counts the bytes the program asks for (a written line's read for ownership is not
// counted). Each cell is the median of --rounds rounds, the sizes interleaved within a round.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/parse_integer.h"

namespace {

struct Options {
  std::vector<double> sizes_mib = {0.5, 1, 3, 8, 32, 128};
  int threads = 1;
  int rounds = 5;
};

std::vector<double> parse_sizes(const std::string& list) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    size_t used = 0;
    double mib = 0.0;
    try {
      mib = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !(mib > 0.0) || mib > 65536.0) {
      std::fprintf(stderr, "bench_bandwidth: --sizes wants MiB in (0, 65536], got '%s'\n", item.c_str());
      std::exit(2);
    }
    out.push_back(mib);
    start = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* flag) { return arg.substr(std::string(flag).size()); };
    if (arg.rfind("--sizes=", 0) == 0) o.sizes_mib = parse_sizes(value("--sizes="));
    else if (arg.rfind("--threads=", 0) == 0) o.threads = static_cast<int>(ember::parse_integer(value("--threads="), "--threads", 1, 1024));
    else if (arg.rfind("--rounds=", 0) == 0) o.rounds = static_cast<int>(ember::parse_integer(value("--rounds="), "--rounds", 1, 1000));
    else {
      std::fprintf(stderr, "bench_bandwidth: unknown argument '%s' (--sizes=, --threads=, --rounds=)\n", arg.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Eight floats, four independent sums of them in flight (one sum would wait on its adds).
typedef float Vec __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

// Bytes per second of one kernel over `elements` floats per thread, each thread on its own arrays.
enum class Kernel { read, triad };
double gb_per_s(Kernel kernel, int64_t elements, int threads) {
  const double bytes_per_pass = static_cast<double>(elements) * sizeof(float) * (kernel == Kernel::read ? 1 : 3);
  const int passes = std::max(2, static_cast<int>(512.0 * (1 << 20) / (bytes_per_pass * threads)));
  double seconds = 0.0;
  float sink = 0.0f;
#pragma omp parallel num_threads(threads) reduction(+ : sink) reduction(max : seconds)
  {
    std::vector<float> a(static_cast<size_t>(elements), 1.0f), b(a), c(a);
    const float s = 0.5f;
    for (int warm = 0; warm < 1; ++warm)
      for (int64_t i = 0; i < elements; ++i) c[i] = a[i] + s * b[i];
#pragma omp barrier
    const auto t0 = std::chrono::steady_clock::now();
    for (int pass = 0; pass < passes; ++pass) {
      if (kernel == Kernel::read) {
        Vec acc[4] = {};
        for (int64_t i = 0; i < elements; i += 4 * kLanes)
          for (int u = 0; u < 4; ++u) {
            Vec v;
            std::memcpy(&v, a.data() + i + u * kLanes, sizeof v);
            acc[u] += v;
          }
        const Vec total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for (int l = 0; l < kLanes; ++l) sink += total[l];
      } else {
        const float* pa = a.data();
        const float* pb = b.data();
        float* pc = c.data();
#pragma omp simd
        for (int64_t i = 0; i < elements; ++i) pc[i] = pa[i] + s * pb[i];
        sink += pc[pass % elements];
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (sink == -1.0f) std::printf(" ");  // keeps the sums alive
  return bytes_per_pass * passes * threads / seconds * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::printf("bench_bandwidth: %d thread(s), medians of %d rounds\n\n", o.threads, o.rounds);
  std::printf("| working set | read GB/s | triad GB/s (2 reads + 1 write) |\n|--:|--:|--:|\n");
  std::vector<std::vector<double>> read(o.sizes_mib.size()), triad(o.sizes_mib.size());
  for (int round = 0; round < o.rounds; ++round)
    for (size_t k = 0; k < o.sizes_mib.size(); ++k) {
      const double total_bytes = o.sizes_mib[k] * (1 << 20);
      // per thread: read touches one array of the working set, triad three
      const int64_t read_elements = std::max<int64_t>(64, static_cast<int64_t>(total_bytes / o.threads / sizeof(float)) / 64 * 64);
      const int64_t triad_elements = std::max<int64_t>(64, read_elements / 3 / 64 * 64);
      read[k].push_back(gb_per_s(Kernel::read, read_elements, o.threads));
      triad[k].push_back(gb_per_s(Kernel::triad, triad_elements, o.threads));
    }
  for (size_t k = 0; k < o.sizes_mib.size(); ++k)
    std::printf("| %g MiB | %.1f | %.1f |\n", o.sizes_mib[k], median(read[k]), median(triad[k]));
  return 0;
}
