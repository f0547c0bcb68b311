#include <numeric>

#include "data/fashion_mnist.h"
#include "data/file_bytes.h"
#include "data/idx_reader.h"
#include "tests/data/reader_fixture.h"

using namespace ember;
using namespace ember::data;
using namespace ember::test;

namespace {

const std::string kSubset = std::string(EMBER_TEST_DATA_DIR) + "/fashion-mnist-subset";

// An IDX file: magic 0x000008<ndims>, big-endian sizes, then `payload`.
std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& payload,
                               uint8_t type = 0x08) {
  std::vector<uint8_t> b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// read_idx with any number of dimensions: the reader expect_read_error runs.
void read_any(const std::string& path) { read_idx(path); }

int64_t pixel_sum(const Tensor& images, int64_t index) {
  const uint8_t* p = images.data<uint8_t>() + index * 28 * 28;
  return std::accumulate(p, p + 28 * 28, int64_t{0});
}

}  // namespace

TEST_CASE("the committed Fashion-MNIST subset reads with known values", "[data]") {
  Dataset train = load_fashion_mnist(kSubset, Split::train);
  CHECK(train.name == "fashion-mnist/train");
  CHECK(train.images.shape() == Shape{2000, 1, 28, 28});
  CHECK(train.images.dtype() == DType::u8);
  CHECK(train.labels.shape() == Shape{2000});
  CHECK(train.labels.dtype() == DType::i64);
  CHECK(train.num_classes == 10);
  // Values read from the original files with Python (scripts/make-test-subset.py prints the labels).
  const std::vector<int64_t> labels = train.labels.to_vector<int64_t>();
  CHECK(std::vector<int64_t>(labels.begin(), labels.begin() + 10) == std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5});
  CHECK(labels.back() == 8);
  std::vector<int64_t> per_class(10, 0);
  for (int64_t l : labels) {
    REQUIRE(l >= 0);
    REQUIRE(l < 10);
    ++per_class[static_cast<size_t>(l)];
  }
  CHECK(per_class == std::vector<int64_t>{194, 216, 202, 195, 186, 200, 194, 215, 198, 200});
  CHECK(pixel_sum(train.images, 0) == 76247);
  // Row 14 of the first image (an ankle boot), bytes 4..9 of it.
  const uint8_t* row = train.images.data<uint8_t>() + 14 * 28;
  CHECK(std::vector<int>(row + 3, row + 8) == std::vector<int>{4, 6, 7, 2, 0});

  Dataset test = load_fashion_mnist(kSubset, Split::test);
  CHECK(test.images.shape() == Shape{250, 1, 28, 28});
  CHECK(test.labels.to_vector<int64_t>()[0] == 9);
  CHECK(pixel_sum(test.images, 0) == 33456);
}

TEST_CASE_METHOD(ReaderFixture, "uncompressed IDX files read the same as gzipped ones", "[data]") {
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"})
    write_file(file(stem), read_file_bytes(kSubset + "/" + stem + ".gz", "test", kMaxIdxDataBytes));
  Dataset gz = load_fashion_mnist(kSubset, Split::train);
  Dataset raw = load_fashion_mnist(dir.path(), Split::train);
  CHECK(raw.images.to_vector<uint8_t>() == gz.images.to_vector<uint8_t>());
  CHECK(raw.labels.to_vector<int64_t>() == gz.labels.to_vector<int64_t>());
  // A file we gzip ourselves reads too.
  Tensor small = read_idx_images(write_gzip_file(file("small.gz"), idx_bytes({2, 1, 3}, {1, 2, 3, 4, 5, 6})));
  CHECK(small.shape() == Shape{2, 1, 1, 3});
  CHECK(small.to_vector<uint8_t>() == std::vector<uint8_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE_METHOD(ReaderFixture, "IDX errors name the file and what is wrong", "[data]") {
  const std::string p = file("bad");
  expect_read_error(p, {0x12, 0x34, 0x08, 0x03, 0, 0, 0, 0}, read_any, {"magic number", "0x12340803"});
  expect_read_error(p, idx_bytes({1, 2, 2}, {1, 2, 3, 4}, 0x0D), read_any, {"data type 0xd", "unsigned bytes"});
  expect_read_error(p, {0, 0}, read_any, {"too short", "magic number"});
  expect_read_error(p, {}, read_any, {"too short"});
  expect_read_error(p, idx_bytes({}, {}), read_any, {"0 dimensions"});

  // Truncated: the header promises 2 x 28 x 28 bytes, the file has 1000.
  expect_read_error(p, idx_bytes({2, 28, 28}, std::vector<uint8_t>(1000, 7)), read_idx_images,
                    {"size", "1568 bytes", "has 1000", "truncated"});
  expect_read_error(p, idx_bytes({3}, {1, 2, 3, 4, 5}), read_idx_labels, {"size", "2 trailing bytes"});
  // 3 sizes announced, 1.5 present.
  expect_read_error(p, {0, 0, 8, 3, 0, 0, 0, 2, 0, 0}, read_any, {"truncated header"});
  // Sizes whose product overflows.
  expect_read_error(p, idx_bytes({0xffffffffu, 0xffffffffu, 0xffffffffu}, {}), read_any,
                    {"size", "too large", "limit of 4294967296 bytes"});

  // Wrong dimension counts for images and labels.
  expect_read_error(p, idx_bytes({4}, {0, 1, 2, 3}), read_idx_images,
                    {"expected 3 dimension", "0x00000801", "gives 1"});
  expect_read_error(p, idx_bytes({1, 2, 2}, {0, 1, 2, 3}), read_idx_labels, {"expected 1 dimension", "gives 3"});
}

TEST_CASE_METHOD(ReaderFixture, "IDX sizes are bounded before anything is allocated from them", "[data]") {
  const std::string p = file("sizes");
  // A 0 size made the byte count 0 and let the others through: [0, 1, 2^32-1, 2^32-1]
  // overflowed the int64 strides of the image tensor (a signed overflow).
  expect_read_error(p, idx_bytes({0, 0xffffffffu, 0xffffffffu}, {}), read_idx_images,
                    {"size", "[0, 4294967295, 4294967295]", "limit of 4294967296 bytes"});
  expect_read_error(p, idx_bytes({65536, 65536, 2}, {}), read_idx_images,
                    {"size", "[65536, 65536, 2]", "limit of 4294967296 bytes"});
  // Empty arrays within the limit read.
  CHECK(read_idx_images(write_file(p, idx_bytes({0, 28, 28}, {}))).shape() == Shape{0, 1, 28, 28});
}

TEST_CASE_METHOD(ReaderFixture, "a gzipped IDX file is inflated no further than its header declares", "[data]") {
  const std::string p = file("bomb.gz");
  // The header declares 1 label; 64 MiB of zeros follow (64 KiB of gzip). The reader used to
  // inflate all of it first: a few MB of such a file inflate to gigabytes.
  expect_read_error(p, gzip_bytes(idx_bytes({1}, std::vector<uint8_t>(size_t{64} << 20, 0))), read_idx_labels,
                    {"size", "dimensions [1] need 1 bytes", "more than 1048576 trailing bytes"});
  // The same file inflated: every trailing byte is counted.
  expect_read_error(p, idx_bytes({1}, std::vector<uint8_t>(size_t{3} << 20, 0)), read_idx_labels,
                    {"the file has 3145728 (3145727 trailing bytes)"});
}

TEST_CASE_METHOD(ReaderFixture, "gzip corruption and truncation are errors, never short reads", "[data]") {
  std::vector<uint8_t> gz = test::read_bytes(kSubset + "/train-labels-idx1-ubyte.gz");
  REQUIRE(gz.size() > 600);

  expect_read_error(file("truncated.gz"), std::vector<uint8_t>(gz.begin(), gz.begin() + 600), read_idx_labels,
                    {"truncated gzip"});

  // A flipped byte inside the compressed stream: a deflate error or a CRC mismatch.
  const std::string corrupt = file("corrupt.gz");
  std::vector<uint8_t> flipped = gz;
  flipped[500] ^= 0x5a;
  expect_read_error(corrupt, flipped, read_idx_labels, {"corrupt gzip"});

  // A wrong CRC-32 in the trailer alone (the data inflates fine).
  std::vector<uint8_t> bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 0xff;
  expect_read_error(corrupt, bad_crc, read_idx_labels, {"corrupt gzip", "incorrect data check"});

  std::vector<uint8_t> garbage = gz;
  garbage.push_back(0x42);
  expect_read_error(corrupt, garbage, read_idx_labels, {"garbage after the gzip stream"});
}

TEST_CASE_METHOD(ReaderFixture, "Fashion-MNIST folder errors: missing folder or files, count mismatch, bad labels",
                 "[data]") {
  expect_error_contains([&] { load_fashion_mnist(dir.path(), Split::test); },
                        {dir.path(), "t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte"});
  // A missing folder is named as such, by the function the program called.
  expect_error_contains([&] { load_fashion_mnist(dir.path() + "/nope", Split::train); },
                        {"load_fashion_mnist", "the folder " + dir.path() + "/nope does not exist"});
  expect_error_contains([&] { load_idx_dataset(dir.path() + "/nope", Split::train, "mnist"); },
                        {"load_idx_dataset", "nope does not exist"});
  expect_error_contains([&] { load_idx_dataset(dir.path(), Split::test, "mnist"); },
                        {"load_idx_dataset", "t10k-images-idx3-ubyte"});

  write_file(file("t10k-images-idx3-ubyte"), idx_bytes({3, 2, 2}, std::vector<uint8_t>(12, 1)));
  write_file(file("t10k-labels-idx1-ubyte"), idx_bytes({2}, {1, 2}));
  expect_error_contains([&] { load_fashion_mnist(dir.path(), Split::test); }, {"3 images", "2 labels"});

  const auto load_test = [&](const std::string&) { load_fashion_mnist(dir.path(), Split::test); };
  expect_read_error(file("t10k-labels-idx1-ubyte"), idx_bytes({3}, {1, 12, 2}), load_test,
                    {"label 12 at index 1", "0..9"});

  write_file(file("t10k-labels-idx1-ubyte"), idx_bytes({3}, {1, 9, 2}));
  Dataset ok = load_fashion_mnist(dir.path(), Split::test);
  CHECK(ok.images.shape() == Shape{3, 1, 2, 2});
  CHECK(ok.labels.to_vector<int64_t>() == std::vector<int64_t>{1, 9, 2});
}
