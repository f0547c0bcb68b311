#pragma once
// What every fuzz target shares: the parser under test may throw ember::Error (its way of
// rejecting input); anything else that escapes (another exception, a crash, a sanitizer
// report, a leak, a hang) is a finding. A property broken on accepted input is one too:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     ember::fuzz::run([&] { ember::parse_byte_size(ember::fuzz::text(data, size), "fuzz"); });
//     return 0;
//   }
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"

namespace ember::fuzz {

template <class Fn>
void run(Fn&& fn) {
  try {
    fn();
  } catch (const Error&) {
  }
}

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }
inline std::vector<uint8_t> bytes(const uint8_t* data, size_t size) { return std::vector<uint8_t>(data, data + size); }

// A property of accepted input does not hold: report it as a crash.
[[noreturn]] inline void broken(const char* property) {
  std::fprintf(stderr, "fuzz: property broken: %s\n", property);
  std::abort();
}

}  // namespace ember::fuzz
