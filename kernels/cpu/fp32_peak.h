#pragma once
// This CPU's fp32 peak, measured rather than looked up: independent chains of vector
// multiply-adds with the widest vectors cpu_isa() allows (kernels/cpu/gemm_kernels.inc's probe,
// compiled per instruction set), on `threads` OpenMP threads at once. The best of ten short
// runs (about 5 ms each, 50 ms in all), so a busy machine reads low, never high.
//
//   const double peak = kernels::cpu::measured_fp32_peak_gflops(2);   // GFLOP/s on 2 threads
//
// bench_gemm, bench_matmul, bench_conv and `ember bench-train` state their GFLOP/s against it.
namespace ember::kernels::cpu {

double measured_fp32_peak_gflops(int threads);

}  // namespace ember::kernels::cpu
