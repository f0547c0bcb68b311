#include "data/idx_reader.h"

#include <cstring>
#include <iomanip>
#include <sstream>

#include "core/bad_alloc_error.h"
#include "core/error.h"
#include "data/byte_stream.h"
#include "data/file_bytes.h"
#include "data/header_sizes.h"
#include "memory/empty.h"
#include "memory/scopes.h"

namespace ember::data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr size_t kMagicBytes = 4;
constexpr size_t kSizeFieldBytes = 4;
// A gzipped file's trailing bytes are counted by inflating them: at most this many.
constexpr uint64_t kMaxCountedTrailingBytes = uint64_t{1} << 20;

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex32(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return os.str();
}

std::string dims_str(const std::vector<int64_t>& dims) { return Shape(dims).str(); }

IdxArray parse_stream(ByteStream& in, const std::string& where, int expected_dims) {
  uint8_t b[kMagicBytes];
  const size_t magic_bytes = in.read(b, kMagicBytes);
  EMBER_CHECK(magic_bytes == kMagicBytes,
              where << ": file too short for the magic number (" << magic_bytes << " bytes)");
  const uint32_t magic = read_be32(b);
  EMBER_CHECK(b[0] == 0 && b[1] == 0, where << ": bad magic number " << hex32(magic)
                                            << " (an IDX file starts with two zero bytes, e.g. 0x00000803)");
  EMBER_CHECK(b[2] == kUnsignedByteType, where << ": magic number " << hex32(magic) << " has data type 0x" << std::hex
                                               << int{b[2]} << "; only unsigned bytes (0x08) are supported");
  const int ndims = b[3];
  EMBER_CHECK(ndims > 0, where << ": magic number " << hex32(magic) << " gives 0 dimensions");
  EMBER_CHECK(expected_dims == 0 || ndims == expected_dims,
              where << ": expected " << expected_dims << " dimension(s) (magic number "
                    << hex32(0x800u | static_cast<uint32_t>(expected_dims)) << "), the magic number " << hex32(magic)
                    << " gives " << ndims);
  std::vector<uint8_t> sizes(kSizeFieldBytes * static_cast<size_t>(ndims));
  const size_t size_bytes = in.read(sizes.data(), sizes.size());
  EMBER_CHECK(size_bytes == sizes.size(), where << ": truncated header: " << ndims << " dimension sizes need "
                                                << kMagicBytes + sizes.size() << " bytes, the file has "
                                                << kMagicBytes + size_bytes);
  IdxArray a;
  for (size_t at = 0; at < sizes.size(); at += kSizeFieldBytes) a.dims.push_back(read_be32(sizes.data() + at));

  uint64_t expected = 0;
  EMBER_CHECK(checked_byte_count(a.dims, 1, kMaxIdxDataBytes, &expected),
              where << ": size: dimensions " << dims_str(a.dims)
                    << " are too large: the product of the nonzero sizes exceeds the limit of " << kMaxIdxDataBytes
                    << " bytes");
  // Grows with the bytes that arrive, so a short (or gzipped) file allocates no more than it holds.
  a.values = in.read_up_to(expected);
  EMBER_CHECK(a.values.size() == expected, where << ": size: dimensions " << dims_str(a.dims) << " need " << expected
                                                 << " bytes of data, the file has " << a.values.size()
                                                 << " (truncated file)");
  const uint64_t trailing = in.count_rest(kMaxCountedTrailingBytes);
  const bool cut = in.compressed() && trailing > kMaxCountedTrailingBytes;  // plain bytes are counted exactly
  const char* more = cut ? "more than " : "";
  const uint64_t shown = cut ? kMaxCountedTrailingBytes : trailing;
  EMBER_CHECK(trailing == 0, where << ": size: dimensions " << dims_str(a.dims) << " need " << expected
                                   << " bytes of data, the file has " << more << expected + shown << " (" << more
                                   << shown << " trailing bytes)");
  return a;
}

}  // namespace

IdxArray parse_idx(const uint8_t* data, size_t size, const std::string& name, int expected_dims) {
  const std::string where = "read_idx: " + name;
  return with_bad_alloc_as_error(where, [&] {
    ByteStream in(data, size, name, "read_idx");
    return parse_stream(in, where, expected_dims);
  });
}

IdxArray read_idx(const std::string& path, int expected_dims) {
  return with_bad_alloc_as_error("read_idx: " + path, [&] {
    const std::vector<uint8_t> stored = read_raw_file_bytes(path, "read_idx");
    return parse_idx(stored.data(), stored.size(), path, expected_dims);
  });
}

Tensor idx_images(const IdxArray& a) {
  EMBER_CHECK(a.dims.size() == 3, "idx_images: expected [N, H, W], got " << dims_str(a.dims));
  CategoryScope scope(MemoryCategory::data);
  Tensor images = empty(Shape{a.dims[0], 1, a.dims[1], a.dims[2]}, TensorOptions(DType::u8));
  if (images.numel() > 0) std::memcpy(images.data_ptr(), a.values.data(), images.nbytes());
  return images;
}

Tensor idx_labels(const IdxArray& a) {
  EMBER_CHECK(a.dims.size() == 1, "idx_labels: expected [N], got " << dims_str(a.dims));
  CategoryScope scope(MemoryCategory::data);
  Tensor labels = empty(Shape{a.dims[0]}, TensorOptions(DType::i64));
  int64_t* out = labels.data<int64_t>();
  for (int64_t i = 0; i < a.dims[0]; ++i) out[i] = a.values[static_cast<size_t>(i)];
  return labels;
}

Tensor read_idx_images(const std::string& path) { return idx_images(read_idx(path, 3)); }
Tensor read_idx_labels(const std::string& path) { return idx_labels(read_idx(path, 1)); }

}  // namespace ember::data
