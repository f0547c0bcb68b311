#include "data/cifar10_reader.h"
#include "data/file_bytes.h"
#include "tests/data/reader_fixture.h"

using namespace ember;
using namespace ember::data;
using namespace ember::test;

namespace {

// Pixel byte i (0..3071, channel-major) of record r of a synthetic file.
uint8_t synthetic_pixel(int64_t record, int64_t i) { return static_cast<uint8_t>((record * 7 + i * 13) % 251); }

// `count` records; record r has label (first_record + r) % 10.
std::vector<uint8_t> cifar_bytes(int64_t first_record, int64_t count) {
  std::vector<uint8_t> b;
  for (int64_t r = first_record; r < first_record + count; ++r) {
    b.push_back(static_cast<uint8_t>(r % 10));
    for (int64_t i = 0; i < 3072; ++i) b.push_back(synthetic_pixel(r, i));
  }
  return b;
}

void write_cifar_folder(const TempDir& dir) {
  for (int i = 1; i <= 5; ++i)
    write_bytes(dir.file("data_batch_" + std::to_string(i) + ".bin"), cifar_bytes((i - 1) * 3, 3));
  write_bytes(dir.file("test_batch.bin"), cifar_bytes(100, 2));
}

}  // namespace

TEST_CASE_METHOD(ReaderFixture, "CIFAR-10 binary files read into [N, 3, 32, 32] u8 and i64 labels", "[data]") {
  write_cifar_folder(dir);
  Dataset train = load_cifar10(dir.path(), Split::train);
  CHECK(train.name == "cifar-10/train");
  CHECK(train.images.shape() == Shape{15, 3, 32, 32});
  CHECK(train.images.dtype() == DType::u8);
  CHECK(train.num_classes == 10);
  std::vector<int64_t> expected_labels;
  for (int64_t r = 0; r < 15; ++r) expected_labels.push_back(r % 10);
  CHECK(train.labels.to_vector<int64_t>() == expected_labels);
  // The record's pixels are already [C, H, W]: record r, channel c, row y, column x is byte c*1024 + y*32 + x.
  const uint8_t* images = train.images.data<uint8_t>();
  for (int64_t r : {0, 4, 14})
    for (int64_t c : {0, 1, 2})
      for (int64_t yx : {0, 33, 1023}) {
        const int64_t i = c * 1024 + yx;
        INFO("record " << r << " byte " << i);
        CHECK(images[r * 3072 + i] == synthetic_pixel(r, i));
      }

  Dataset test = load_cifar10(dir.path(), Split::test);
  CHECK(test.images.shape() == Shape{2, 3, 32, 32});
  CHECK(test.labels.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK(test.images.data<uint8_t>()[3072 + 5] == synthetic_pixel(101, 5));
}

TEST_CASE_METHOD(ReaderFixture, "CIFAR-10 errors name the file: bad size, bad label, missing batch", "[data]") {
  write_cifar_folder(dir);
  const std::string bad = file("data_batch_2.bin");
  // The whole training folder is read; the error names the bad file in it.
  const auto load_train = [&](const std::string&) { load_cifar10(dir.path(), Split::train); };
  std::vector<uint8_t> bytes = cifar_bytes(0, 2);
  bytes.resize(bytes.size() - 5);  // a truncated last record
  expect_read_error(bad, bytes, load_train, {"6141 bytes", "multiple", "3073"});
  expect_read_error(bad, {}, load_train, {"size 0 bytes", "3073"});

  bytes = cifar_bytes(0, 3);
  bytes[3073] = 10;  // the label byte of record 1
  expect_read_error(bad, bytes, load_train, {"label 10 in record 1", "0..9"});

  std::filesystem::remove(file("data_batch_3.bin"));
  expect_error_contains([&] { load_cifar10(dir.path(), Split::train); }, {dir.path(), "data_batch_3.bin"});
  expect_error_contains([&] { load_cifar10(dir.path() + "/nope", Split::test); },
                        {"load_cifar10", "the folder " + dir.path() + "/nope does not exist"});
  expect_error_contains([&] { read_cifar10_files({}, "none"); }, {"no files"});
}

TEST_CASE_METHOD(ReaderFixture, "a gzipped CIFAR-10 file reads the same, and inflates no further than the limit",
                 "[data]") {
  const std::vector<uint8_t> raw = cifar_bytes(0, 3);
  Dataset gz = read_cifar10_files({write_gzip_file(file("batch.bin"), raw)}, "gz");
  CHECK(gz.images.shape() == Shape{3, 3, 32, 32});
  CHECK(gz.images.data<uint8_t>()[2 * 3072 + 7] == synthetic_pixel(2, 7));
  // Inflation stops one byte past the limit: a few MB of gzip could otherwise inflate to
  // gigabytes and end in an uncaught std::bad_alloc. (kMaxCifar10FileBytes, 1 GiB, is the
  // reader's limit; a small one here shows the mechanism.)
  const uint64_t limit = 2 * kCifar10RecordBytes;
  expect_error_contains([&] { decode_file_bytes(gzip_bytes(raw), "three.bin", "read_cifar10", limit); },
                        {"read_cifar10", "three.bin", "inflates to more than the limit of 6146 bytes"});
  expect_error_contains([&] { decode_file_bytes(raw, "three.bin", "read_cifar10", limit); },
                        {"read_cifar10", "three.bin", "9219 bytes, more than the limit of 6146 bytes"});
  CHECK(decode_file_bytes(gzip_bytes(raw), "three.bin", "read_cifar10", 3 * kCifar10RecordBytes) == raw);
  // Files already in memory parse the same way.
  CHECK(parse_cifar10({{"mem", raw}}, "mem").labels.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2});
  expect_error_contains([&] { parse_cifar10({{"mem", {1, 2, 3}}}, "mem"); }, {"mem", "size 3 bytes", "3073"});
}
