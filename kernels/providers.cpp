#include "kernels/providers.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace ember::kernels {
namespace {

GemmProvider gemm_from_env() {
  const char* v = std::getenv("EMBER_GEMM");
  if (v == nullptr || std::string(v) == "custom") return GemmProvider::custom;
  if (std::string(v) == "cublas") return GemmProvider::cublas;
  EMBER_THROW("EMBER_GEMM='" << v << "': expected custom or cublas");
}

ConvProvider conv_from_env() {
  const char* v = std::getenv("EMBER_CONV");
  if (v == nullptr || std::string(v) == "custom") return ConvProvider::custom;
  if (std::string(v) == "cudnn") return ConvProvider::cudnn;
  EMBER_THROW("EMBER_CONV='" << v << "': expected custom or cudnn");
}

CpuConvAlgorithm cpu_conv_from_env() {
  const char* v = std::getenv("EMBER_CPU_CONV");
  if (v == nullptr || std::string(v) == "auto") return CpuConvAlgorithm::automatic;
  if (std::string(v) == "im2col") return CpuConvAlgorithm::im2col;
  if (std::string(v) == "winograd") return CpuConvAlgorithm::winograd;
  if (std::string(v) == "winograd4") return CpuConvAlgorithm::winograd4;
  if (std::string(v) == "direct") return CpuConvAlgorithm::direct;
  EMBER_THROW("EMBER_CPU_CONV='" << v << "': expected auto, im2col, winograd, winograd4 or direct");
}

void check_available(CpuGemmProvider provider, const char* source) {
  EMBER_CHECK(cpu_gemm_provider_available(provider),
              source << "openblas, but this build has no OpenBLAS (EMBER_USE_BLAS=OFF, or none was found): only ember");
}

CpuGemmProvider cpu_gemm_from_env() {
  const char* v = std::getenv("EMBER_CPU_GEMM");
  if (v == nullptr || std::string(v) == "ember") return CpuGemmProvider::ember;
  EMBER_CHECK(std::string(v) == "openblas", "EMBER_CPU_GEMM='" << v << "': expected ember or openblas");
  check_available(CpuGemmProvider::openblas, "EMBER_CPU_GEMM asks for ");
  return CpuGemmProvider::openblas;
}

std::atomic<GemmProvider>& gemm_slot() {
  static std::atomic<GemmProvider> slot{gemm_from_env()};
  return slot;
}
std::atomic<ConvProvider>& conv_slot() {
  static std::atomic<ConvProvider> slot{conv_from_env()};
  return slot;
}

std::atomic<CpuConvAlgorithm>& cpu_conv_slot() {
  static std::atomic<CpuConvAlgorithm> slot{cpu_conv_from_env()};
  return slot;
}

std::atomic<CpuGemmProvider>& cpu_gemm_slot() {
  static std::atomic<CpuGemmProvider> slot{cpu_gemm_from_env()};
  return slot;
}

}  // namespace

GemmProvider gemm_provider() { return gemm_slot().load(); }
void set_gemm_provider(GemmProvider provider) { gemm_slot().store(provider); }
ConvProvider conv_provider() { return conv_slot().load(); }
void set_conv_provider(ConvProvider provider) { conv_slot().store(provider); }
CpuConvAlgorithm cpu_conv_algorithm() { return cpu_conv_slot().load(); }
void set_cpu_conv_algorithm(CpuConvAlgorithm algorithm) { cpu_conv_slot().store(algorithm); }
bool cpu_gemm_provider_available(CpuGemmProvider provider) {
#ifdef EMBER_HAVE_OPENBLAS
  (void)provider;
  return true;
#else
  return provider == CpuGemmProvider::ember;
#endif
}
CpuGemmProvider cpu_gemm_provider() { return cpu_gemm_slot().load(); }
void set_cpu_gemm_provider(CpuGemmProvider provider) {
  check_available(provider, "set_cpu_gemm_provider asks for ");
  cpu_gemm_slot().store(provider);
}
const char* cpu_gemm_provider_name(CpuGemmProvider p) { return p == CpuGemmProvider::ember ? "ember" : "openblas"; }
const char* cpu_conv_algorithm_name(CpuConvAlgorithm a) {
  switch (a) {
    case CpuConvAlgorithm::automatic: return "auto";
    case CpuConvAlgorithm::im2col: return "im2col";
    case CpuConvAlgorithm::winograd: return "winograd";
    case CpuConvAlgorithm::winograd4: return "winograd4";
    case CpuConvAlgorithm::direct: return "direct";
  }
  return "?";
}
const char* gemm_provider_name(GemmProvider p) { return p == GemmProvider::custom ? "custom" : "cublas"; }
const char* conv_provider_name(ConvProvider p) { return p == ConvProvider::custom ? "custom" : "cudnn"; }

}  // namespace ember::kernels
