#include "data/idx_reader.h"

#include <cstring>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "data/file_bytes.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr size_t kMagicBytes = 4;
constexpr size_t kSizeFieldBytes = 4;

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex32(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return os.str();
}

std::string dims_str(const std::vector<int64_t>& dims) { return Shape(dims).str(); }

}  // namespace

IdxArray read_idx(const std::string& path, int expected_dims) {
  IdxArray a;
  a.bytes = read_file_bytes(path, "read_idx");
  const std::vector<uint8_t>& b = a.bytes;
  EMBER_CHECK(b.size() >= kMagicBytes, "read_idx: " << path << ": file too short for the magic number ("
                                                    << b.size() << " bytes)");
  const uint32_t magic = read_be32(b.data());
  EMBER_CHECK(b[0] == 0 && b[1] == 0, "read_idx: " << path << ": bad magic number " << hex32(magic)
                                                   << " (an IDX file starts with two zero bytes, e.g. 0x00000803)");
  EMBER_CHECK(b[2] == kUnsignedByteType,
              "read_idx: " << path << ": magic number " << hex32(magic) << " has data type 0x" << std::hex
                           << int{b[2]} << "; only unsigned bytes (0x08) are supported");
  const int ndims = b[3];
  EMBER_CHECK(ndims > 0, "read_idx: " << path << ": magic number " << hex32(magic) << " gives 0 dimensions");
  EMBER_CHECK(expected_dims == 0 || ndims == expected_dims,
              "read_idx: " << path << ": expected " << expected_dims << " dimension(s) (magic number "
                           << hex32(0x800u | static_cast<uint32_t>(expected_dims)) << "), the magic number "
                           << hex32(magic) << " gives " << ndims);
  a.data_offset = kMagicBytes + kSizeFieldBytes * static_cast<size_t>(ndims);
  EMBER_CHECK(b.size() >= a.data_offset, "read_idx: " << path << ": truncated header: " << ndims
                                                      << " dimension sizes need " << a.data_offset
                                                      << " bytes, the file has " << b.size());
  for (int d = 0; d < ndims; ++d)
    a.dims.push_back(read_be32(b.data() + kMagicBytes + kSizeFieldBytes * static_cast<size_t>(d)));
  uint64_t expected_bytes = 0;
  const bool representable = checked_byte_count(a.dims, 1, &expected_bytes);
  const uint64_t actual_bytes = b.size() - a.data_offset;
  EMBER_CHECK(representable && actual_bytes >= expected_bytes,
              "read_idx: " << path << ": size: dimensions " << dims_str(a.dims) << " need "
                           << (representable ? std::to_string(expected_bytes) : std::string("more than 2^64"))
                           << " bytes of data, the file has " << actual_bytes << " (truncated file)");
  EMBER_CHECK(actual_bytes == expected_bytes, "read_idx: " << path << ": size: dimensions " << dims_str(a.dims)
                                                           << " need " << expected_bytes << " bytes of data, the file has "
                                                           << actual_bytes << " (" << actual_bytes - expected_bytes
                                                           << " trailing bytes)");
  return a;
}

Tensor read_idx_images(const std::string& path) {
  const IdxArray a = read_idx(path, 3);
  CategoryScope scope(MemoryCategory::data);
  Tensor images = empty(Shape{a.dims[0], 1, a.dims[1], a.dims[2]}, TensorOptions(DType::u8));
  if (images.numel() > 0) std::memcpy(images.data_ptr(), a.values(), images.nbytes());
  return images;
}

Tensor read_idx_labels(const std::string& path) {
  const IdxArray a = read_idx(path, 1);
  CategoryScope scope(MemoryCategory::data);
  Tensor labels = empty(Shape{a.dims[0]}, TensorOptions(DType::i64));
  int64_t* out = labels.data<int64_t>();
  for (int64_t i = 0; i < a.dims[0]; ++i) out[i] = a.values()[i];
  return labels;
}

}  // namespace ember::data
