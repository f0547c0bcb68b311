#include "data/dataset.h"

#include "core/error.h"

namespace ember::data {

const char* split_name(Split split) { return split == Split::train ? "train" : "test"; }

void check_dataset(const Dataset& d, const char* op) {
  EMBER_CHECK(d.images.defined() && d.labels.defined(), op << ": dataset '" << d.name << "' has no images or labels");
  EMBER_CHECK(d.images.dim() == 4, op << ": dataset '" << d.name << "': images must be [N, C, H, W], got "
                                      << d.images.shape());
  EMBER_CHECK(d.images.dtype() == DType::u8 || d.images.dtype() == DType::f32,
              op << ": dataset '" << d.name << "': images must be u8 or f32, got " << d.images.dtype());
  EMBER_CHECK(d.labels.dim() == 1 && d.labels.dtype() == DType::i64,
              op << ": dataset '" << d.name << "': labels must be i64 [N], got " << d.labels.dtype() << " "
                 << d.labels.shape());
  EMBER_CHECK(d.images.device().is_cpu() && d.labels.device().is_cpu(),
              op << ": dataset '" << d.name << "' must live on the CPU (the loader moves batches)");
  EMBER_CHECK(d.images.size(0) == d.labels.size(0), op << ": dataset '" << d.name << "' has " << d.images.size(0)
                                                       << " images but " << d.labels.size(0) << " labels");
  EMBER_CHECK(d.num_classes > 0, op << ": dataset '" << d.name << "': num_classes must be positive");
  check_labels(d.labels, d.num_classes, "dataset '" + d.name + "'", op);
}

void check_labels(const Tensor& labels, int64_t num_classes, const std::string& where, const char* op) {
  const int64_t* l = labels.data<int64_t>();
  for (int64_t i = 0; i < labels.numel(); ++i)
    EMBER_CHECK(l[i] >= 0 && l[i] < num_classes, op << ": " << where << ": label " << l[i] << " at index " << i
                                                    << " is outside 0.." << num_classes - 1);
}

Dataset make_dataset(std::string name, Tensor images, Tensor labels, int64_t num_classes) {
  Dataset d{std::move(name), std::move(images), std::move(labels), num_classes};
  check_dataset(d, "dataset");
  return d;
}

}  // namespace ember::data
