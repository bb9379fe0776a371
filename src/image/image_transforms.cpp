#include "trainer/image/image_transforms.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace trainer::image {
namespace {

// Python's round() on a double: half to even (std::nearbyint in the default rounding mode).
int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

// Pillow's ImagingBlend for 8-bit samples: in1 + alpha * (in2 - in1) in float, truncated; clamped
// when alpha is outside [0, 1] (inside, the result cannot leave [0, 255]).
inline uint8_t blend(int degenerate, int value, float alpha) {
  const float mixed = static_cast<float>(degenerate) + alpha * static_cast<float>(value - degenerate);
  if (mixed <= 0.0f) return 0;
  if (mixed >= 255.0f) return 255;
  return static_cast<uint8_t>(mixed);
}

inline uint8_t luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

}  // namespace

void crop(const Image& in, const CropBox& box, Image& out) {
  out.reshape(box.height, box.width, in.channels);
  const size_t bytes = out.row_bytes();
  const size_t offset = static_cast<size_t>(box.left) * static_cast<size_t>(in.channels);
  for (int y = 0; y < box.height; ++y) std::memcpy(out.row(y), in.row(box.top + y) + offset, bytes);
}

void pad(const Image& in, int left, int top, int right, int bottom, Image& out) {
  out.reshape(in.height + top + bottom, in.width + left + right, in.channels);
  std::fill(out.pixels.begin(), out.pixels.end(), uint8_t{0});
  const size_t offset = static_cast<size_t>(left) * static_cast<size_t>(in.channels);
  for (int y = 0; y < in.height; ++y) std::memcpy(out.row(top + y) + offset, in.row(y), in.row_bytes());
}

void center_crop(const Image& in, int height, int width, Image& out, Image& scratch) {
  const Image* source = &in;
  if (height > in.height || width > in.width) {
    const int pad_left = width > in.width ? (width - in.width) / 2 : 0;
    const int pad_top = height > in.height ? (height - in.height) / 2 : 0;
    const int pad_right = width > in.width ? (width - in.width + 1) / 2 : 0;
    const int pad_bottom = height > in.height ? (height - in.height + 1) / 2 : 0;
    pad(in, pad_left, pad_top, pad_right, pad_bottom, scratch);
    source = &scratch;
    if (source->height == height && source->width == width) {
      out = scratch;
      return;
    }
  }
  CropBox box;
  box.top = round_half_even((source->height - height) / 2.0);
  box.left = round_half_even((source->width - width) / 2.0);
  box.height = height;
  box.width = width;
  crop(*source, box, out);
}

void horizontal_flip(Image& image) {
  const int c = image.channels;
  for (int y = 0; y < image.height; ++y) {
    uint8_t* row = image.row(y);
    for (int left = 0, right = image.width - 1; left < right; ++left, --right) {
      for (int k = 0; k < c; ++k) std::swap(row[left * c + k], row[right * c + k]);
    }
  }
}

CropBox random_resized_crop_box(int height, int width, double scale_min, double scale_max, double ratio_min,
                                double ratio_max, SeededRandom& random) {
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(ratio_min), log_max = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * random.uniform(scale_min, scale_max);
    const double aspect = std::exp(random.uniform(log_min, log_max));
    const int w = round_half_even(std::sqrt(target_area * aspect));
    const int h = round_half_even(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      CropBox box;
      const int rows = height - h + 1, columns = width - w + 1;  // the offsets that fit
      box.top = static_cast<int>(random.below(static_cast<uint64_t>(rows)));
      box.left = static_cast<int>(random.below(static_cast<uint64_t>(columns)));
      box.height = h;
      box.width = w;
      return box;
    }
  }
  // The fallback: the central crop with the ratio clamped into range.
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < std::min(ratio_min, ratio_max)) {
    h = round_half_even(w / std::min(ratio_min, ratio_max));
  } else if (in_ratio > std::max(ratio_min, ratio_max)) {
    w = round_half_even(h * std::max(ratio_min, ratio_max));
  }
  CropBox box;
  box.top = (height - h) / 2;
  box.left = (width - w) / 2;
  box.height = h;
  box.width = w;
  return box;
}

void adjust_brightness(Image& image, double factor) {
  const auto alpha = static_cast<float>(factor);
  for (uint8_t& v : image.pixels) v = blend(0, v, alpha);
}

void adjust_contrast(Image& image, double factor) {
  // ImageStat's mean of the luma image, rounded half up as int(mean + 0.5).
  uint64_t sum = 0;
  const size_t pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  if (pixels == 0) return;
  if (image.channels == 3) {
    for (size_t i = 0; i < pixels; ++i) sum += luma(&image.pixels[i * 3]);
  } else {
    for (size_t i = 0; i < pixels; ++i) sum += image.pixels[i];
  }
  const int mean = static_cast<int>(std::floor(static_cast<double>(sum) / static_cast<double>(pixels) + 0.5));
  const auto alpha = static_cast<float>(factor);
  for (uint8_t& v : image.pixels) v = blend(mean, v, alpha);
}

void adjust_saturation(Image& image, double factor) {
  if (image.channels != 3) return;  // a gray image is its own luma: the blend changes nothing
  const auto alpha = static_cast<float>(factor);
  const size_t pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  for (size_t i = 0; i < pixels; ++i) {
    uint8_t* p = &image.pixels[i * 3];
    const int gray = luma(p);
    for (int k = 0; k < 3; ++k) p[k] = blend(gray, p[k], alpha);
  }
}

void rgb_to_gray(const Image& in, Image& out) {
  out.reshape(in.height, in.width, 1);
  const size_t pixels = out.pixels.size();
  for (size_t i = 0; i < pixels; ++i) out.pixels[i] = luma(&in.pixels[i * 3]);
}

void gray_to_rgb(const Image& in, Image& out) {
  out.reshape(in.height, in.width, 3);
  const size_t pixels = in.pixels.size();
  for (size_t i = 0; i < pixels; ++i) {
    out.pixels[i * 3] = out.pixels[i * 3 + 1] = out.pixels[i * 3 + 2] = in.pixels[i];
  }
}

void normalize_to_chw(const Image& image, const float* mean, const float* std, float* out) {
  const size_t plane = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  const int c = image.channels;
  float table[256];  // the 256 possible results, each computed exactly as below would compute it
  for (int k = 0; k < c; ++k) {
    const float m = mean[k], s = std[k];
    for (int v = 0; v < 256; ++v) table[v] = (static_cast<float>(v) / 255.0f - m) / s;
    float* dst = out + static_cast<size_t>(k) * plane;
    const uint8_t* src = image.pixels.data() + k;
    for (size_t i = 0; i < plane; ++i) dst[i] = table[src[i * c]];
  }
}

}  // namespace trainer::image
