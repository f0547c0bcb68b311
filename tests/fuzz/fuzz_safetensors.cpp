// The safetensors reader on a whole file (length prefix, JSON header, data). What it accepts
// must survive a round trip: the header ember writes for the loaded tensors, followed by their
// bytes, loads back to the same names, dtypes, shapes, bytes and metadata.
#include <cstring>

#include "data/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace ember;
using namespace ember::data;

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
}

void check_round_trip(const std::map<std::string, Tensor>& loaded, const SafetensorsMetadata& metadata) {
  const NamedTensors tensors(loaded.begin(), loaded.end());
  const std::string header = safetensors_header(tensors, metadata);
  std::vector<uint8_t> file(header.begin(), header.end());
  for (const auto& [name, t] : tensors) {
    const auto* p = static_cast<const uint8_t*>(t.data_ptr());
    file.insert(file.end(), p, p + t.nbytes());
  }
  SafetensorsMetadata again_metadata;
  const std::map<std::string, Tensor> again = parse_safetensors(file.data(), file.size(), "round trip", &again_metadata);
  if (again_metadata != metadata || again.size() != loaded.size()) fuzz::broken("round trip: names or metadata differ");
  for (const auto& [name, t] : loaded) {
    const auto it = again.find(name);
    if (it == again.end() || it->second.dtype() != t.dtype() || it->second.shape() != t.shape() || !same_bytes(it->second, t))
      fuzz::broken("round trip: a tensor differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::run([&] {
    SafetensorsMetadata metadata;
    const std::map<std::string, Tensor> loaded = parse_safetensors(data, size, "fuzz.safetensors", &metadata);
    check_round_trip(loaded, metadata);
  });
  return 0;
}
