#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (gzipped or not):
// a big-endian magic number 0x000008DD (0x08 = unsigned bytes, DD = dimension
// count), DD big-endian u32 sizes, then the bytes in row-major order.
//
//   Tensor images = ember::data::read_idx_images("train-images-idx3-ubyte.gz");  // [N, 1, H, W] u8
//   Tensor labels = ember::data::read_idx_labels("train-labels-idx1-ubyte.gz");  // [N] i64
//
// Every check failure throws ember::Error naming the file and what is wrong:
// the magic number, the dimension count, or the size (a truncated file or trailing
// bytes); gzip corruption is reported by data/file_bytes.h.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember::data {

struct IdxArray {
  std::vector<int64_t> dims;    // sizes from the header, outermost first
  std::vector<uint8_t> bytes;   // the whole (decompressed) file
  size_t data_offset = 0;       // where the values start in `bytes`
  const uint8_t* values() const { return bytes.data() + data_offset; }
};

// Reads and validates any unsigned-byte IDX file; `expected_dims` > 0 also checks the dimension count.
IdxArray read_idx(const std::string& path, int expected_dims = 0);
// A 3-d IDX file [N, H, W] as images [N, 1, H, W] u8.
Tensor read_idx_images(const std::string& path);
// A 1-d IDX file [N] as labels [N] i64.
Tensor read_idx_labels(const std::string& path);

}  // namespace ember::data
