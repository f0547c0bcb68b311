#include "data/cifar10_reader.h"

#include <cstring>

#include "core/bad_alloc_error.h"
#include "core/error.h"
#include "data/file_bytes.h"
#include "memory/scopes.h"
#include "memory/empty.h"

namespace ember::data {
namespace {

constexpr int64_t kCifar10Classes = 10;
constexpr int kTrainBatches = 5;
constexpr int64_t kImageBytes = kCifar10RecordBytes - 1;

}  // namespace

Dataset parse_cifar10(std::vector<Cifar10File> files, const std::string& name) {
  EMBER_CHECK(!files.empty(), "read_cifar10: no files given for " << name);
  return with_bad_alloc_as_error("read_cifar10: " + name, [&] {
    int64_t records = 0;
    for (const Cifar10File& file : files) {
      const auto size = static_cast<int64_t>(file.bytes.size());
      EMBER_CHECK(size > 0 && size % kCifar10RecordBytes == 0,
                  "read_cifar10: " << file.name << ": size " << size << " bytes is not a positive multiple of the "
                                   << kCifar10RecordBytes << "-byte record (1 label + 3072 pixels); truncated file?");
      records += size / kCifar10RecordBytes;
    }
    CategoryScope scope(MemoryCategory::data);
    Tensor images = empty(Shape{records, kCifar10Channels, kCifar10ImageSide, kCifar10ImageSide}, DType::u8);
    Tensor labels = empty(Shape{records}, DType::i64);
    uint8_t* image_out = images.data<uint8_t>();
    int64_t* label_out = labels.data<int64_t>();
    int64_t r = 0;
    for (Cifar10File& file : files) {
      const std::vector<uint8_t>& bytes = file.bytes;
      for (size_t at = 0; at < bytes.size(); at += kCifar10RecordBytes, ++r) {
        EMBER_CHECK(bytes[at] < kCifar10Classes, "read_cifar10: " << file.name << ": label " << int{bytes[at]}
                                                              << " in record " << at / kCifar10RecordBytes
                                                              << " is outside 0.." << kCifar10Classes - 1);
        label_out[r] = bytes[at];
        std::memcpy(image_out + r * kImageBytes, bytes.data() + at + 1, kImageBytes);
      }
      file.bytes = {};  // release each file as soon as it is copied
    }
    return make_dataset(name, std::move(images), std::move(labels), kCifar10Classes);
  });
}

Dataset read_cifar10_files(const std::vector<std::string>& paths, const std::string& name) {
  std::vector<Cifar10File> files;
  for (const std::string& path : paths)
    files.push_back({path, read_file_bytes(path, "read_cifar10", kMaxCifar10FileBytes)});
  return parse_cifar10(std::move(files), name);
}

Dataset load_cifar10(const std::string& folder, Split split) {
  std::vector<std::string> paths;
  if (split == Split::train) {
    for (int i = 1; i <= kTrainBatches; ++i)
      paths.push_back(find_file(folder, {"data_batch_" + std::to_string(i) + ".bin"}, "load_cifar10"));
  } else {
    paths.push_back(find_file(folder, {"test_batch.bin"}, "load_cifar10"));
  }
  return read_cifar10_files(paths, std::string("cifar-10/") + split_name(split));
}

}  // namespace ember::data
