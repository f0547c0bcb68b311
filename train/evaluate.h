#pragma once
// train::evaluate: a model's mean loss (and, for class labels, accuracy) over every batch
// of a loader, in eval mode and without a graph; what train::fit reports after each epoch.
//
//   ember::train::Evaluation e = ember::train::evaluate(*model, test_loader);   // cross-entropy
//   std::cout << e.accuracy << " " << e.loss << "\n";
//   e = ember::train::evaluate(*model, loader, [](const Tensor& y, const Tensor& t) { return ember::mse_loss(y, t); });
//
// Inputs are cast to the dtype of the model's parameters (f16 weights get f16 inputs); the
// model's train/eval mode is put back as it was.
#include <cstdint>
#include "data/data_loader.h"
#include "models/module.h"
#include "train/trainer.h"

namespace ember::train {

struct Evaluation {
  double loss = 0.0;      // mean over the samples of `loss` (a mean per batch, weighted by its size)
  double accuracy = 0.0;  // argmax hits / samples when the targets are class labels ([B] i64); 0 otherwise
  int64_t samples = 0;
};

Evaluation evaluate(nn::Module& model, data::DataLoader& loader, const LossFn& loss = {});

}  // namespace ember::train
