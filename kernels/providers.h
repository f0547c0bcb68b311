#pragma once
// Which implementation serves the heavy CUDA ops. Ours ("custom") and the vendor
// library's, chosen at run time so a benchmark can swap one kernel inside a real
// training run and a test can compare them:
//
//   EMBER_GEMM=custom|cublas   EMBER_CONV=custom|cudnn      (environment, read once)
//   ember::kernels::set_gemm_provider(ember::kernels::GemmProvider::cublas);  (code)
//
// The CPU convolution has three algorithms (Winograd in two tile sizes), chosen the same way:
//
//   EMBER_CPU_CONV=auto|im2col|winograd|winograd4|direct         (environment, read once)
//   { ember::kernels::CpuConvScope reference(CpuConvAlgorithm::im2col); ... }   (code)
//
//   auto      Winograd where it applies and pays (3x3, stride 1, >= 16 channels in and out:
//             kernels/cpu/conv2d_winograd.h), F(4x4, 3x3) for the forward and input gradient
//             where a row of its tiles fills the vectors (28x28 and 14x14 planes, not 7x7),
//             else F(2x2, 3x3); the weight gradient F(4x4) wherever Winograd runs; the
//             direct convolution for the other
//             stride-1 layers with fewer than 16 input channels, f32, on a CPU with AVX2 or
//             AVX-512 (kernels/cpu/conv2d_direct.h); im2col + GEMM elsewhere
//   im2col    im2col + GEMM everywhere: the straightforward reference (kernels/cpu/conv2d.cpp)
//   winograd  Winograd F(2x2, 3x3) wherever it applies (any channel count), im2col elsewhere
//   winograd4 the same with F(4x4, 3x3) for the forward, input and weight gradients (fewer
//             multiplications, 10-20x the rounding error; slower on small planes)
//   direct    the direct convolution wherever it applies (stride 1, f32, AVX2 or AVX-512;
//             forward and weight gradient), im2col elsewhere
//
// The CPU's matrix products (matmul, linear, the convolutions' GEMMs: kernels/cpu/gemm.h) have
// two providers, as the GPU's have:
//
//   EMBER_CPU_GEMM=ember|openblas                                (environment, read once)
//   { ember::kernels::CpuGemmScope reference(CpuGemmProvider::openblas); ... }   (code)
//
//   ember     ember's own packed GEMM, the default
//   openblas  OpenBLAS (through Eigen), the reference; only in a build with OpenBLAS
namespace ember::kernels {

enum class GemmProvider { custom, cublas };
enum class ConvProvider { custom, cudnn };

GemmProvider gemm_provider();
void set_gemm_provider(GemmProvider provider);
ConvProvider conv_provider();
void set_conv_provider(ConvProvider provider);
const char* gemm_provider_name(GemmProvider provider);
const char* conv_provider_name(ConvProvider provider);

enum class CpuConvAlgorithm { automatic, im2col, winograd, winograd4, direct };
CpuConvAlgorithm cpu_conv_algorithm();
void set_cpu_conv_algorithm(CpuConvAlgorithm algorithm);
const char* cpu_conv_algorithm_name(CpuConvAlgorithm algorithm);

enum class CpuGemmProvider { ember, openblas };
CpuGemmProvider cpu_gemm_provider();
// Whether this build has the provider: openblas only where OpenBLAS was found (EMBER_USE_BLAS).
bool cpu_gemm_provider_available(CpuGemmProvider provider);
// Throws for a provider this build lacks.
void set_cpu_gemm_provider(CpuGemmProvider provider);
const char* cpu_gemm_provider_name(CpuGemmProvider provider);

// Selects a CPU convolution algorithm for one scope and restores the previous one.
class CpuConvScope {
 public:
  explicit CpuConvScope(CpuConvAlgorithm algorithm) : previous_(cpu_conv_algorithm()) {
    set_cpu_conv_algorithm(algorithm);
  }
  ~CpuConvScope() { set_cpu_conv_algorithm(previous_); }
  CpuConvScope(const CpuConvScope&) = delete;
  CpuConvScope& operator=(const CpuConvScope&) = delete;

 private:
  CpuConvAlgorithm previous_;
};

// Selects the CPU's GEMM provider for one scope and restores the previous one.
class CpuGemmScope {
 public:
  explicit CpuGemmScope(CpuGemmProvider provider) : previous_(cpu_gemm_provider()) { set_cpu_gemm_provider(provider); }
  ~CpuGemmScope() { set_cpu_gemm_provider(previous_); }
  CpuGemmScope(const CpuGemmScope&) = delete;
  CpuGemmScope& operator=(const CpuGemmScope&) = delete;

 private:
  CpuGemmProvider previous_;
};

// Selects both providers for one scope and restores the previous ones:
//   { ember::kernels::ProviderScope vendor(GemmProvider::cublas, ConvProvider::cudnn); ... }
class ProviderScope {
 public:
  ProviderScope(GemmProvider gemm, ConvProvider conv) : gemm_(gemm_provider()), conv_(conv_provider()) {
    set_gemm_provider(gemm);
    set_conv_provider(conv);
  }
  ~ProviderScope() {
    set_gemm_provider(gemm_);
    set_conv_provider(conv_);
  }
  ProviderScope(const ProviderScope&) = delete;
  ProviderScope& operator=(const ProviderScope&) = delete;

 private:
  GemmProvider gemm_;
  ConvProvider conv_;
};

}  // namespace ember::kernels
