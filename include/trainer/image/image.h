// One decoded image in memory: 8-bit samples, rows top to bottom, channels interleaved (HWC), 1
// channel (gray) or 3 (RGB). The decoders fill it and the transforms rewrite it; its buffer is
// reused from sample to sample, so a loader thread allocates only while sizes still grow.
#pragma once

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

}  // namespace trainer::image
