// read_idx's parser on an IDX file as stored (plain, or gzip when it starts with 1f 8b), then
// the image or label tensor the readers make of it.
#include "data/idx_reader.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::run([&] {
    const ember::data::IdxArray a = ember::data::parse_idx(data, size, "fuzz.idx");
    if (a.dims.size() == 3) ember::data::idx_images(a);
    if (a.dims.size() == 1) ember::data::idx_labels(a);
  });
  return 0;
}
