#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (gzipped or not):
// a big-endian magic number 0x000008DD (0x08 = unsigned bytes, DD = dimension
// count), DD big-endian u32 sizes, then the bytes in row-major order.
//
//   Tensor images = ember::data::read_idx_images("train-images-idx3-ubyte.gz");  // [N, 1, H, W] u8
//   Tensor labels = ember::data::read_idx_labels("train-labels-idx1-ubyte.gz");  // [N] i64
//
// Every check failure throws ember::Error naming the file and what is wrong: the magic
// number, the dimension count, or the size (sizes past the limit below, a truncated file
// or trailing bytes); gzip corruption is reported by data/gzip_inflater.h. The sizes are
// checked before anything is allocated, and a gzipped file is inflated no further than its
// header declares (its trailing bytes are counted up to 1 MiB more).
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ember::data {

// The most data bytes an IDX file may declare: 4 GiB. (MNIST's largest file holds 47 MB,
// EMNIST's 0.6 GB.) The product of the nonzero sizes is bounded, so a 0 size does not
// excuse the others.
inline constexpr uint64_t kMaxIdxDataBytes = uint64_t{1} << 32;

struct IdxArray {
  std::vector<int64_t> dims;    // sizes from the header, outermost first
  std::vector<uint8_t> values;  // the data, row-major
};

// Parses the bytes of an IDX file as stored (gzipped or not); `name` (the file) labels the
// errors; `expected_dims` > 0 also checks the dimension count.
IdxArray parse_idx(const uint8_t* data, size_t size, const std::string& name, int expected_dims = 0);
// Reads and parses any unsigned-byte IDX file.
IdxArray read_idx(const std::string& path, int expected_dims = 0);
// A 3-d array [N, H, W] as images [N, 1, H, W] u8; a 1-d array [N] as labels [N] i64.
Tensor idx_images(const IdxArray& array);
Tensor idx_labels(const IdxArray& array);
// read_idx then idx_images / idx_labels.
Tensor read_idx_images(const std::string& path);
Tensor read_idx_labels(const std::string& path);

}  // namespace ember::data
