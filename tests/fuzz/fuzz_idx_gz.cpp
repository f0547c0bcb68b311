// read_idx's parser on gzipped IDX files: input that is gzip already (starts with 1f 8b) is
// parsed as it is (corrupt and truncated streams, garbage after them); any other input is an
// IDX file gzipped here first, so the header checks and the bounded inflation behind them
// see every header the fuzzer makes.
#include "data/gzip_inflater.h"
#include "data/idx_reader.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/support/gzip_bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> gz =
      ember::data::is_gzip(data, size) ? ember::fuzz::bytes(data, size) : ember::test::gzip_bytes(ember::fuzz::bytes(data, size));
  ember::fuzz::run([&] {
    const ember::data::IdxArray a = ember::data::parse_idx(gz.data(), gz.size(), "fuzz.idx.gz");
    if (a.dims.size() == 3) ember::data::idx_images(a);
    if (a.dims.size() == 1) ember::data::idx_labels(a);
  });
  return 0;
}
