#include "data/transforms.h"

#include <algorithm>

#include "core/error.h"
#include "core/philox.h"
#include "data/sampler.h"
#include "memory/empty.h"

namespace ember::data {
namespace {

constexpr float kU8Scale = 1.0f / 255.0f;
constexpr int64_t kPrefetchAhead = 4;  // samples
constexpr int64_t kCacheLine = 64;

void prefetch_sample(const char* p, int64_t bytes) {
  for (int64_t at = 0; at < bytes; at += kCacheLine) __builtin_prefetch(p + at);
}

// x -> x * scale[c] + bias[c] folds the u8 scaling and the normalisation into one multiply-add.
struct ChannelAffine {
  std::vector<float> scale, bias;
};

ChannelAffine channel_affine(const Transforms& t, int64_t channels, DType dtype) {
  const float pixel_scale = dtype == DType::u8 ? kU8Scale : 1.0f;
  ChannelAffine a{std::vector<float>(channels, pixel_scale), std::vector<float>(channels, 0.0f)};
  for (int64_t c = 0; c < channels && !t.mean.empty(); ++c) {
    const size_t k = t.mean.size() == 1 ? 0 : static_cast<size_t>(c);
    a.scale[c] = pixel_scale / t.std[k];
    a.bias[c] = -t.mean[k] / t.std[k];
  }
  return a;
}

// One [C, H, W] sample: out(c, y, x) = source(c, y + top - pad, x' + left - pad), x' = flip ? W-1-x : x,
// and padding outside the source.
template <class T>
void transform_sample(const T* src, int64_t channels, int64_t height, int64_t width, int64_t pad,
                      const SampleAugmentation& aug, const ChannelAffine& affine, float* out) {
  for (int64_t c = 0; c < channels; ++c) {
    const float scale = affine.scale[c], bias = affine.bias[c];  // bias is where a 0 pixel lands
    const T* plane = src + c * height * width;
    if (pad == 0 && !aug.flip) {  // the plane as it is: one loop, not short rows with scalar tails
      const int64_t numel = height * width;
#pragma omp simd
      for (int64_t k = 0; k < numel; ++k) out[k] = static_cast<float>(plane[k]) * scale + bias;
      out += numel;
      continue;
    }
    for (int64_t y = 0; y < height; ++y, out += width) {
      const int64_t sy = y + aug.top - pad;
      if (sy < 0 || sy >= height) {
        std::fill(out, out + width, bias);
        continue;
      }
      // Columns x in [begin, end) read the source (at x + shift, or mirrored at width - 1 - x + shift):
      // loops with no test per pixel, vectorised (`simd`: a u8 source may alias any store, so the
      // compiler would not on its own).
      const T* row = plane + sy * width;
      const int64_t shift = aug.left - pad;
      const int64_t begin = std::clamp<int64_t>(aug.flip ? shift : -shift, 0, width);
      const int64_t end = std::clamp<int64_t>(aug.flip ? width + shift : width - shift, begin, width);
      std::fill(out, out + begin, bias);
      if (aug.flip) {
        const int64_t last = width - 1 + shift;
#pragma omp simd
        for (int64_t x = begin; x < end; ++x) out[x] = static_cast<float>(row[last - x]) * scale + bias;
      } else {
#pragma omp simd
        for (int64_t x = begin; x < end; ++x) out[x] = static_cast<float>(row[x + shift]) * scale + bias;
      }
      std::fill(out + end, out + width, bias);
    }
  }
}

}  // namespace

Transforms& Transforms::normalize(std::vector<float> channel_mean, std::vector<float> channel_std) {
  mean = std::move(channel_mean);
  std = std::move(channel_std);
  return *this;
}

Transforms& Transforms::random_crop(int64_t padding) {
  crop_padding = padding;
  return *this;
}

Transforms& Transforms::random_horizontal_flip(bool enabled) {
  horizontal_flip = enabled;
  return *this;
}

void check_transforms(const Transforms& t, int64_t channels, const char* op) {
  EMBER_CHECK(t.mean.size() == t.std.size(), op << ": normalize: " << t.mean.size() << " means but "
                                                << t.std.size() << " standard deviations");
  EMBER_CHECK(t.mean.empty() || t.mean.size() == 1 || static_cast<int64_t>(t.mean.size()) == channels,
              op << ": normalize: " << t.mean.size() << " channel means for images with " << channels
                 << " channels (give one per channel, or one for all)");
  for (float s : t.std) EMBER_CHECK(s > 0.0f, op << ": normalize: standard deviation " << s << " must be > 0");
  EMBER_CHECK(t.crop_padding >= 0, op << ": random_crop: padding " << t.crop_padding << " must be >= 0");
}

SampleAugmentation draw_augmentation(const Transforms& t, GeneratorState state, int64_t sample_index) {
  SampleAugmentation aug;
  if (!t.is_random()) return aug;
  const PhiloxOutput r = philox4x32(state.seed, state.offset + static_cast<uint64_t>(sample_index));
  const int64_t positions = 2 * t.crop_padding + 1;
  aug.top = uniform_below(r.v[0], positions);
  aug.left = uniform_below(r.v[1], positions);
  aug.flip = t.horizontal_flip && (r.v[2] >> 31) != 0;
  return aug;
}

void transform_batch(const Transforms& t, const Tensor& images, const int64_t* indices, int64_t count,
                     GeneratorState state, float* out) {
  EMBER_CHECK(images.dim() == 4 && images.device().is_cpu() &&
                  (images.dtype() == DType::u8 || images.dtype() == DType::f32),
              "transforms: images must be u8 or f32 [N, C, H, W] on the CPU, got " << images.str());
  const int64_t n = images.size(0), channels = images.size(1), height = images.size(2), width = images.size(3);
  check_transforms(t, channels, "transforms");
  const ChannelAffine affine = channel_affine(t, channels, images.dtype());
  const int64_t sample_numel = channels * height * width;
  const int64_t sample_bytes = sample_numel * static_cast<int64_t>(dtype_size(images.dtype()));
  for (int64_t b = 0; b < count; ++b)
    EMBER_CHECK(indices[b] >= 0 && indices[b] < n,
                "transforms: sample index " << indices[b] << " is outside 0.." << n - 1);
  for (int64_t b = 0; b < count; ++b) {
    const int64_t i = indices[b];
    // A shuffled batch reads samples scattered over the data set, most of them from memory
    // rather than cache: ask for a later sample's lines now, so their loads overlap this one's.
    if (b + kPrefetchAhead < count)
      prefetch_sample(static_cast<const char*>(images.data_ptr()) + indices[b + kPrefetchAhead] * sample_bytes,
                      sample_bytes);
    const SampleAugmentation aug = draw_augmentation(t, state, i);
    float* dst = out + b * sample_numel;
    if (images.dtype() == DType::u8)
      transform_sample(images.data<uint8_t>() + i * sample_numel, channels, height, width, t.crop_padding, aug,
                       affine, dst);
    else
      transform_sample(images.data<float>() + i * sample_numel, channels, height, width, t.crop_padding, aug,
                       affine, dst);
  }
}

Tensor apply_transforms(const Transforms& t, const Tensor& images, const std::vector<int64_t>& indices,
                        GeneratorState state) {
  EMBER_CHECK(images.dim() == 4, "transforms: images must be [N, C, H, W], got " << images.shape());
  Tensor out = empty(Shape{static_cast<int64_t>(indices.size()), images.size(1), images.size(2), images.size(3)},
                     DType::f32);
  transform_batch(t, images, indices.data(), static_cast<int64_t>(indices.size()), state,
                  out.numel() > 0 ? out.data<float>() : nullptr);
  return out;
}

}  // namespace ember::data
