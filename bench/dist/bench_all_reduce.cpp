// What an all-reduce costs here: ember's all_reduce (dist/) of an f32 buffer the size of each zoo
// model's gradients and a sweep of sizes, against MPI_Allreduce called directly (the peer), under
// `mpirun -np N`. Interleaved (ember, MPI, ember, ...), repeated, medians; rank 0 prints the table:
// time, algorithm bandwidth (bytes / time) and bus bandwidth (algbw x 2 (N - 1) / N, what each
// rank's link carries in a ring, as nccl-tests reports it).
//
//   mpirun -np 2 build/bench/bench_all_reduce            # bench/dist/data_parallel_cost.sh runs it
//   mpirun -np 2 build/bench/bench_all_reduce --json     # one JSON line per size
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dist/world.h"
#include "memory/empty.h"
#include "models/zoo.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call, the ranks' slowest (every rank waits for the last anyway), of `calls` calls.
template <typename Call>
double time_calls(int calls, const Call& call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < calls; ++i) call();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / calls;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ember;
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  dist::ProcessGroup& group = dist::init_process_group();
  std::vector<std::pair<std::string, int64_t>> sizes;  // label, f32 elements
  for (const std::string& model : {"lenet5", "convnet", "resnet20"})
    sizes.emplace_back(model + " gradients", models::make_model(model, Shape{1, 28, 28}, 10)->num_parameters());
  for (int64_t kib : {4, 64, 1024, 16384}) sizes.emplace_back(std::to_string(kib) + " KiB", kib * 1024 / 4);
  if (group.rank() == 0 && !json)
    std::printf("all_reduce (sum) of f32 buffers over %d ranks (%s), medians of 5 interleaved rounds\n"
                "%-20s %12s %12s %12s %12s %12s %10s\n",
                group.size(), group.backend_name().c_str(), "buffer", "bytes", "ember us", "MPI us", "algbw GB/s",
                "busbw GB/s", "ember/MPI");
  for (const auto& [label, elements] : sizes) {
    Tensor buffer = empty({elements}, TensorOptions().dtype(DType::f32));
    std::fill(buffer.data<float>(), buffer.data<float>() + elements, 0.0f);  // sums of zeros stay finite
    const double bytes = 4.0 * static_cast<double>(elements);
    const int calls = std::max(3, static_cast<int>(2e8 / (bytes + 1e4)));  // about 0.1 s per round
    std::vector<double> ours, peer;
    for (int round = 0; round < 5; ++round) {
      ours.push_back(time_calls(calls, [&] { group.all_reduce(buffer, dist::ReduceOp::sum); }));
      peer.push_back(time_calls(calls, [&] {
        MPI_Allreduce(MPI_IN_PLACE, buffer.data<float>(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      }));
    }
    const double t = median(ours), p = median(peer);
    const double algbw = bytes / t / 1e9, busbw = algbw * 2.0 * (group.size() - 1) / group.size();
    if (group.rank() != 0) continue;
    if (json)
      std::printf("{\"buffer\":\"%s\",\"bytes\":%.0f,\"ranks\":%d,\"ember_us\":%.2f,\"mpi_us\":%.2f,\"algbw_gbs\":%.3f,"
                  "\"busbw_gbs\":%.3f}\n",
                  label.c_str(), bytes, group.size(), t * 1e6, p * 1e6, algbw, busbw);
    else
      std::printf("%-20s %12.0f %12.1f %12.1f %12.2f %12.2f %10.2f\n", label.c_str(), bytes, t * 1e6, p * 1e6, algbw,
                  busbw, t / p);
  }
  return 0;
}
