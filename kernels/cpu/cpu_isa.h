#pragma once
// The vector instruction set the CPU kernels that carry their own intrinsics run with,
// chosen at run time: the best this CPU has, or less when asked (to measure the AVX2 path on
// an AVX-512 machine, or to compare against the portable code):
//
//   EMBER_CPU_ISA=auto|baseline|avx2|avx512                      (environment, read once)
//   { ember::kernels::cpu::CpuIsaScope avx2(CpuIsa::avx2); ... }  (code)
//
//   baseline  no hand-vectorised kernels: those ops take their portable algorithm
//   avx2      AVX2 + FMA, 8 floats per vector (x86-64-v3)
//   avx512    AVX-512F, 16 floats per vector
//
// Asking for an instruction set this CPU lacks is an error that names what it has. The rest of
// the library is compiled for the build machine (EMBER_NATIVE: -march=native) or for the
// compiler's default; only the kernels behind this switch carry code for more than one ISA.
#include <string>

namespace ember::kernels::cpu {

enum class CpuIsa { baseline, avx2, avx512 };

// The best instruction set this CPU supports.
CpuIsa cpu_isa_supported();
// The one the kernels use now (EMBER_CPU_ISA or set_cpu_isa; the best supported by default).
CpuIsa cpu_isa();
// Throws when the CPU does not support `isa`.
void set_cpu_isa(CpuIsa isa);
const char* cpu_isa_name(CpuIsa isa);
// EMBER_CPU_ISA's text: auto (the best supported), baseline, avx2 or avx512; throws, naming
// the values, for anything else, and for an instruction set this CPU lacks.
CpuIsa cpu_isa_from_string(const std::string& text);

class CpuIsaScope {
 public:
  explicit CpuIsaScope(CpuIsa isa) : previous_(cpu_isa()) { set_cpu_isa(isa); }
  ~CpuIsaScope() { set_cpu_isa(previous_); }
  CpuIsaScope(const CpuIsaScope&) = delete;
  CpuIsaScope& operator=(const CpuIsaScope&) = delete;

 private:
  CpuIsa previous_;
};

}  // namespace ember::kernels::cpu
