// The --memory-json reader (`ember compare a.json b.json`) on any text.
#include "memory/memory_run.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::run([&] { ember::parse_memory_run(ember::fuzz::text(data, size), "fuzz.json"); });
  return 0;
}
