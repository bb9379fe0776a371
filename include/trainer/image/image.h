// One decoded image in memory: 8-bit samples, rows top to bottom, channels interleaved (HWC), 1
// channel (gray) or 3 (RGB). The decoders fill it and the transforms rewrite it; its buffer is
// reused from sample to sample, so a loader thread allocates only while sizes still grow.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainer::image {

struct Image {
  int height = 0;
  int width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;  // height * width * channels bytes

  // Sets the shape; the pixel values are left as they were (new bytes are zero).
  void reshape(int new_height, int new_width, int new_channels) {
    height = new_height;
    width = new_width;
    channels = new_channels;
    pixels.resize(static_cast<size_t>(height) * static_cast<size_t>(width) * static_cast<size_t>(channels));
  }
  size_t row_bytes() const { return static_cast<size_t>(width) * static_cast<size_t>(channels); }
  uint8_t* row(int y) { return pixels.data() + static_cast<size_t>(y) * row_bytes(); }
  const uint8_t* row(int y) const { return pixels.data() + static_cast<size_t>(y) * row_bytes(); }
};

struct Size {
  int height = 0;
  int width = 0;
};

// The rectangle [top, top + height) x [left, left + width); it must lie inside the image.
struct CropBox {
  int top = 0;
  int left = 0;
  int height = 0;
  int width = 0;
};

// Writes `image`'s pixels channel by channel (CHW, the layout of a batch) to `out`, which holds
// height * width * channels bytes.
inline void copy_planar(const Image& image, uint8_t* out) {
  const size_t plane = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  const uint8_t* src = image.pixels.data();
  if (image.channels == 1) {
    std::copy(src, src + plane, out);
    return;
  }
  if (image.channels == 3) {
    uint8_t* r = out;
    uint8_t* g = out + plane;
    uint8_t* b = out + 2 * plane;
    for (size_t p = 0; p < plane; ++p) {
      r[p] = src[3 * p];
      g[p] = src[3 * p + 1];
      b[p] = src[3 * p + 2];
    }
    return;
  }
  const auto c = static_cast<size_t>(image.channels);
  for (size_t k = 0; k < c; ++k) {
    uint8_t* dst = out + k * plane;
    for (size_t p = 0; p < plane; ++p) dst[p] = src[c * p + k];
  }
}

}  // namespace trainer::image
