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

std::atomic<CpuIsa>& slot() {
  static std::atomic<CpuIsa> isa{[] {
    const char* v = std::getenv("EMBER_CPU_ISA");
    return v == nullptr ? cpu_isa_supported() : cpu_isa_from_string(v);
  }()};
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

CpuIsa cpu_isa_from_string(const std::string& text) {
  if (text == "auto") return cpu_isa_supported();
  CpuIsa isa;
  if (text == "baseline") isa = CpuIsa::baseline;
  else if (text == "avx2") isa = CpuIsa::avx2;
  else if (text == "avx512") isa = CpuIsa::avx512;
  else EMBER_THROW("EMBER_CPU_ISA='" << text << "': expected auto, baseline, avx2 or avx512");
  check_supported(isa, "EMBER_CPU_ISA asks for ");
  return isa;
}

const char* cpu_isa_name(CpuIsa isa) {
  return isa == CpuIsa::avx512 ? "avx512" : isa == CpuIsa::avx2 ? "avx2" : "baseline";
}

}  // namespace ember::kernels::cpu
