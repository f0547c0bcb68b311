// Device's parser (--device, "cpu", "cuda", "cuda:N") on any text. What it accepts prints
// back to a string that parses to the same device.
#include "core/device.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::run([&] {
    const ember::Device device(ember::fuzz::text(data, size));
    if (device.index < 0) ember::fuzz::broken("a negative device index was accepted");
    if (ember::Device(device.str()) != device) ember::fuzz::broken("str() does not parse back to the device");
  });
  return 0;
}
