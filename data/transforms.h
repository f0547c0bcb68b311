#pragma once
// Per-sample image transforms, applied while a batch is assembled: an optional
// random crop (of the original size, from the image zero-padded on every side),
// an optional random left-right flip, then conversion to f32 and normalisation.
//
//   Transforms t = Transforms().random_crop(4).random_horizontal_flip().normalize({0.4914f, 0.4822f, 0.4465f},
//                                                                                  {0.2470f, 0.2435f, 0.2616f});
//   Tensor x = apply_transforms(t, dataset.images, {0, 1, 2}, state);   // [3, C, H, W] f32
//
// u8 pixels are first scaled to [0, 1] (x / 255, like torchvision's ToTensor);
// f32 images are used as they are. Normalisation is (x - mean[c]) / std[c]; padding
// pixels are 0 before normalisation (black), as torchvision pads.
//
// Randomness: the draws for dataset sample i are philox(state.seed, state.offset + i),
// so a sample's crop and flip depend only on the generator state (which the loader
// derives from its seed and the epoch) and on i, never on batch order or threads.
#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace ember::data {

struct Transforms {
  std::vector<float> mean;       // per channel, or one value for every channel; empty: no normalisation
  std::vector<float> std;        // same length as mean, every value > 0
  int64_t crop_padding = 0;      // > 0: random crop after zero-padding by this many pixels
  bool horizontal_flip = false;  // flip left-right with probability 1/2

  Transforms& normalize(std::vector<float> channel_mean, std::vector<float> channel_std);
  Transforms& random_crop(int64_t padding);
  Transforms& random_horizontal_flip(bool enabled = true);
  bool is_random() const { return crop_padding > 0 || horizontal_flip; }
};

// Throws naming `op` when the transforms do not fit images with `channels` channels.
void check_transforms(const Transforms& t, int64_t channels, const char* op);

// The random choices for one sample. top/left are in the padded image, 0..2*padding.
struct SampleAugmentation {
  int64_t top = 0;
  int64_t left = 0;
  bool flip = false;
};
SampleAugmentation draw_augmentation(const Transforms& t, GeneratorState state, int64_t sample_index);

// Writes the samples `indices[0..count)` of images [N, C, H, W] (u8 or f32, CPU),
// transformed, into `out` (count * C * H * W floats).
void transform_batch(const Transforms& t, const Tensor& images, const int64_t* indices, int64_t count,
                     GeneratorState state, float* out);
// The same into a new [B, C, H, W] f32 tensor on the CPU.
Tensor apply_transforms(const Transforms& t, const Tensor& images, const std::vector<int64_t>& indices,
                        GeneratorState state = {});

}  // namespace ember::data
