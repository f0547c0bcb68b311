#include "data/fashion_mnist.h"

#include "core/error.h"
#include "data/file_bytes.h"
#include "data/idx_reader.h"

namespace ember::data {
namespace {

constexpr int64_t kNumClasses = 10;

std::string find_idx_file(const std::string& folder, const std::string& stem) {
  return find_file(folder, {stem + ".gz", stem}, "load_fashion_mnist");
}

}  // namespace

Dataset load_idx_dataset(const std::string& folder, Split split, const std::string& name) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  const std::string images_path = find_idx_file(folder, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_idx_file(folder, prefix + "-labels-idx1-ubyte");
  Tensor images = read_idx_images(images_path);
  Tensor labels = read_idx_labels(labels_path);
  EMBER_CHECK(images.size(0) == labels.size(0), "load_fashion_mnist: " << images_path << " has " << images.size(0)
                                                                       << " images but " << labels_path << " has "
                                                                       << labels.size(0) << " labels");
  check_labels(labels, kNumClasses, labels_path, "load_fashion_mnist");
  return make_dataset(name + "/" + split_name(split), std::move(images), std::move(labels), kNumClasses);
}

Dataset load_fashion_mnist(const std::string& folder, Split split) {
  return load_idx_dataset(folder, split, "fashion-mnist");
}

}  // namespace ember::data
