#include "kernels/cpu/cpu_isa.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace ember::kernels::cpu {
namespace {

CpuIsa detect() {
#if defined(__x86_64__) && defined(EMBER_X86_KERNELS)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return CpuIsa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::avx2;
#endif
  return CpuIsa::baseline;
}

void check_supported(CpuIsa isa, const char* source) {
  EMBER_CHECK(isa <= cpu_isa_supported(), source << cpu_isa_name(isa) << ", but this CPU (or build) supports at most "
                                                 << cpu_isa_name(cpu_isa_supported()));
}

CpuIsa from_env() {
  const char* v = std::getenv("EMBER_CPU_ISA");
  if (v == nullptr || std::string(v) == "auto") return cpu_isa_supported();
  CpuIsa isa;
  if (std::string(v) == "baseline") isa = CpuIsa::baseline;
  else if (std::string(v) == "avx2") isa = CpuIsa::avx2;
  else if (std::string(v) == "avx512") isa = CpuIsa::avx512;
  else EMBER_THROW("EMBER_CPU_ISA='" << v << "': expected auto, baseline, avx2 or avx512");
  check_supported(isa, "EMBER_CPU_ISA asks for ");
  return isa;
}

std::atomic<CpuIsa>& slot() {
  static std::atomic<CpuIsa> isa{from_env()};
  return isa;
}

}  // namespace

CpuIsa cpu_isa_supported() {
  static const CpuIsa supported = detect();
  return supported;
}

CpuIsa cpu_isa() { return slot().load(); }

void set_cpu_isa(CpuIsa isa) {
  check_supported(isa, "set_cpu_isa asks for ");
  slot().store(isa);
}

const char* cpu_isa_name(CpuIsa isa) {
  return isa == CpuIsa::avx512 ? "avx512" : isa == CpuIsa::avx2 ? "avx2" : "baseline";
}

}  // namespace ember::kernels::cpu
