// The safetensors reader driven from its JSON header: the input is the header text, then
// optionally a NUL byte and the data buffer (JSON text holds no raw NUL). The length prefix
// is written here, so every input reaches the JSON parser and the field checks.
#include <algorithm>

#include "data/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t header_bytes = static_cast<size_t>(std::find(data, data + size, 0) - data);
  std::vector<uint8_t> file;
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<uint8_t>(static_cast<uint64_t>(header_bytes) >> (8 * i)));
  file.insert(file.end(), data, data + header_bytes);
  if (header_bytes < size) file.insert(file.end(), data + header_bytes + 1, data + size);
  ember::fuzz::run([&] { ember::data::parse_safetensors(file.data(), file.size(), "fuzz.safetensors"); });
  return 0;
}
