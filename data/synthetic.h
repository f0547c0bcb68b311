#pragma once
// Small deterministic classification problems for tests, demos and the
// `ember train --data spirals` smoke run: no files, same points for the same seed
// on every machine (a fixed-algorithm generator, not std::normal_distribution).
//
//   ember::data::SyntheticOptions options;
//   options.classes = 3;
//   ember::data::Dataset d = ember::data::make_spirals(options);
//   d.images;   // [N, 2, 1, 1] f32: 2-D points shaped as 2-channel 1x1 images, so the
//               // DataLoader and the image models' pipeline take them unchanged
//   d.labels;   // [N] i64, class-major order (shuffle before batching)
#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace ember::data {

struct SyntheticOptions {
  int64_t samples_per_class = 300;
  int64_t classes = 3;
  double noise = 0.2;  // spirals: std of the angle jitter (radians); blobs: std of each cluster
  uint64_t seed = 0;
};

// K interleaved arms (CS231n's spiral data): sample i of class k sits at radius r = i/(n-1)
// and angle 4r + 2*pi*k/K + noise. Not linearly separable.
Dataset make_spirals(const SyntheticOptions& options = {});
// K isotropic Gaussian clusters on a circle of radius 3: almost linearly separable.
Dataset make_blobs(const SyntheticOptions& options = {});
// "spirals" or "blobs"; throws naming the known names otherwise.
Dataset make_synthetic(const std::string& name, const SyntheticOptions& options = {});

}  // namespace ember::data
