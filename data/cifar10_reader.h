#pragma once
// Reader for the CIFAR-10 binary version: each file is a run of 3073-byte
// records, one label byte (0..9) then 3072 pixel bytes (1024 red, 1024 green,
// 1024 blue, rows of 32), which is already [C, H, W] order.
//
//   using namespace ember::data;
//   Dataset train = load_cifar10("cifar-10-batches-bin", Split::train);  // data_batch_1..5.bin, 50000 x [3, 32, 32] u8
//   Dataset test = load_cifar10("cifar-10-batches-bin", Split::test);    // test_batch.bin
//
// Errors name the file and what is wrong (missing, size not a multiple of 3073, more
// than the limit below, label out of range). A gzipped batch file (.bin that starts with
// 1f 8b) is inflated, no further than the limit.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ember::data {

inline constexpr int64_t kCifar10ImageSide = 32;
inline constexpr int64_t kCifar10Channels = 3;
inline constexpr int64_t kCifar10RecordBytes = 1 + kCifar10Channels * kCifar10ImageSide * kCifar10ImageSide;
// Per-channel statistics of the CIFAR-10 training set, in [0, 1] pixel units.
inline constexpr float kCifar10Mean[3] = {0.4914f, 0.4822f, 0.4465f};
inline constexpr float kCifar10Std[3] = {0.2470f, 0.2435f, 0.2616f};

// The most bytes one file may hold (inflated): 1 GiB, about 350,000 records. (A CIFAR-10
// batch file holds 10,000 records, 30.7 MB.)
inline constexpr uint64_t kMaxCifar10FileBytes = uint64_t{1} << 30;

// One file's bytes (inflated) and its name for errors.
struct Cifar10File {
  std::string name;
  std::vector<uint8_t> bytes;
};

Dataset load_cifar10(const std::string& folder, Split split);
// The records of `paths`, in order, as one dataset.
Dataset read_cifar10_files(const std::vector<std::string>& paths, const std::string& name);
// The same for files already in memory (each is released as soon as it is copied).
Dataset parse_cifar10(std::vector<Cifar10File> files, const std::string& name);

}  // namespace ember::data
