// The CIFAR-10 reader on one batch file as stored (plain, or gzip when it starts with 1f 8b):
// inflation bounded by kMaxCifar10FileBytes, then the record checks and the dataset.
#include "data/cifar10_reader.h"
#include "data/file_bytes.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::data;
  ember::fuzz::run([&] {
    std::vector<uint8_t> bytes =
        decode_file_bytes(ember::fuzz::bytes(data, size), "fuzz.bin", "read_cifar10", kMaxCifar10FileBytes);
    parse_cifar10({{"fuzz.bin", std::move(bytes)}}, "fuzz");
  });
  return 0;
}
