#pragma once
// Fashion-MNIST (and MNIST, same format and file names) from a folder of IDX
// files, gzipped or not:
//
//   using namespace ember::data;
//   Dataset train = load_fashion_mnist(kFashionMnistDir, Split::train);  // 60000 x [1, 28, 28] u8
//   Dataset test = load_fashion_mnist(kFashionMnistDir, Split::test);    // 10000
//
// The folder holds train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz),
// t10k-images-idx3-ubyte(.gz) and t10k-labels-idx1-ubyte(.gz).
#include <string>

#include "data/dataset.h"

namespace ember::data {

// Where Debian's dataset-fashion-mnist package installs the full set.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Channel statistics of the Fashion-MNIST training set, in [0, 1] pixel units.
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;

Dataset load_fashion_mnist(const std::string& folder, Split split);
// Same reader; `name` only labels the dataset (e.g. "mnist").
Dataset load_idx_dataset(const std::string& folder, Split split, const std::string& name);

}  // namespace ember::data
