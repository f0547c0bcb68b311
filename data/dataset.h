#pragma once
// Dataset: a whole labelled image set in memory, as the readers return it.
//
//   ember::data::Dataset train = ember::data::load_fashion_mnist(kFashionMnistDir, Split::train);
//   train.images;   // [N, 1, 28, 28] u8
//   train.labels;   // [N] i64, each in 0..num_classes-1
//   ember::data::DataLoader loader(train, options);   // data/data_loader.h
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace ember::data {

enum class Split { train, test };
const char* split_name(Split split);

struct Dataset {
  std::string name;       // "fashion-mnist/train", shown in errors and logs
  Tensor images;          // [N, C, H, W] u8 (raw pixels) or f32, on the CPU
  Tensor labels;          // [N] i64
  int64_t num_classes = 0;

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  int64_t channels() const { return images.size(1); }
  int64_t height() const { return images.size(2); }
  int64_t width() const { return images.size(3); }
};

// Throws naming `op` and the dataset when the tensors do not have the layout above
// or a label is outside 0..num_classes-1.
void check_dataset(const Dataset& dataset, const char* op);

// Throws naming `op` and `where` (a file or dataset) when a label of `labels`
// (i64 [N]) is outside 0..num_classes-1.
void check_labels(const Tensor& labels, int64_t num_classes, const std::string& where, const char* op);

// Wraps reader output into a Dataset, checking labels (the readers' last step).
Dataset make_dataset(std::string name, Tensor images, Tensor labels, int64_t num_classes);

}  // namespace ember::data
