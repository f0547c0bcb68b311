#include "data/fashion_mnist.h"

#include "core/error.h"
#include "data/file_bytes.h"
#include "data/idx_reader.h"

namespace ember::data {
namespace {

constexpr int64_t kFashionMnistClasses = 10;

std::string find_idx_file(const std::string& folder, const std::string& stem, const char* op) {
  return find_file(folder, {stem + ".gz", stem}, op);
}

// Both entry points; `op` is the one the caller called, which every error names.
Dataset load_idx(const std::string& folder, Split split, const std::string& name, const char* op) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  const std::string images_path = find_idx_file(folder, prefix + "-images-idx3-ubyte", op);
  const std::string labels_path = find_idx_file(folder, prefix + "-labels-idx1-ubyte", op);
  Tensor images = read_idx_images(images_path);
  Tensor labels = read_idx_labels(labels_path);
  EMBER_CHECK(images.size(0) == labels.size(0), op << ": " << images_path << " has " << images.size(0)
                                                   << " images but " << labels_path << " has " << labels.size(0)
                                                   << " labels");
  check_labels(labels, kFashionMnistClasses, labels_path, op);
  return make_dataset(name + "/" + split_name(split), std::move(images), std::move(labels), kFashionMnistClasses);
}

}  // namespace

Dataset load_idx_dataset(const std::string& folder, Split split, const std::string& name) {
  return load_idx(folder, split, name, "load_idx_dataset");
}

Dataset load_fashion_mnist(const std::string& folder, Split split) {
  return load_idx(folder, split, "fashion-mnist", "load_fashion_mnist");
}

}  // namespace ember::data
