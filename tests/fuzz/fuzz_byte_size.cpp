// parse_byte_size (EMBER_CPU_MEMORY_LIMIT, --memory-limit, --memory-budget) on any text. What
// it accepts is at most 2^63 - 1 bytes and starts with a digit: no inf, nan, sign or space.
#include <cstdint>

#include "memory/byte_size.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = ember::fuzz::text(data, size);
  ember::fuzz::run([&] {
    const size_t bytes = ember::parse_byte_size(text, "fuzz");
    if (bytes > static_cast<size_t>(INT64_MAX)) ember::fuzz::broken("a size above 2^63 - 1 bytes was accepted");
    if (text.empty() || text[0] < '0' || text[0] > '9') ember::fuzz::broken("a size not starting with a digit was accepted");
  });
  return 0;
}
