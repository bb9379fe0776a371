#include "trainer/image/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace trainer::image {
namespace {

// Pillow's fixed-point precision for 8-bit resampling: 32 bits, minus 8 for the sample, minus 2
// of headroom for the sum.
constexpr int kPrecisionBits = 32 - 8 - 2;

double bilinear(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// For each output index: the first input index it reads, how many, and their weights in fixed
// point (Pillow's precompute_coeffs + normalize_coeffs_8bpc).
struct Coefficients {
  int taps = 0;                   // weights per output index (the widest window)
  std::vector<int> first, count;  // per output index
  std::vector<int32_t> weights;   // out_size * taps
};

Coefficients coefficients(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // the bilinear filter's support is 1
  Coefficients c;
  c.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<size_t>(out_size));
  c.count.resize(static_cast<size_t>(out_size));
  c.weights.assign(static_cast<size_t>(out_size) * static_cast<size_t>(c.taps), 0);
  std::vector<double> k(static_cast<size_t>(c.taps));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double inverse = 1.0 / filter_scale;
    // C's (int) truncates toward zero; both bounds are clamped as Pillow clamps them.
    int xmin = static_cast<int>(std::trunc(center - support + 0.5));
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(std::trunc(center + support + 0.5));
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = bilinear((x + xmin - center + 0.5) * inverse);
      k[static_cast<size_t>(x)] = w;
      total += w;
    }
    int32_t* out = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
    for (int x = 0; x < xmax; ++x) {
      const double w = total != 0.0 ? k[static_cast<size_t>(x)] / total : k[static_cast<size_t>(x)];
      const double fixed = w * (1 << kPrecisionBits);
      out[x] = static_cast<int32_t>(w < 0 ? std::trunc(-0.5 + fixed) : std::trunc(0.5 + fixed));
    }
    c.first[static_cast<size_t>(xx)] = xmin;
    c.count[static_cast<size_t>(xx)] = xmax;
  }
  return c;
}

inline uint8_t clip8(int64_t sum) {
  const int64_t v = sum >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Rows [row_begin, row_end) of `in`, resampled along x, into `out` (rows 0..).
void horizontal(const Image& in, int row_begin, int row_end, const Coefficients& c, int out_width, Image& out) {
  const int channels = in.channels;
  out.reshape(row_end - row_begin, out_width, channels);
  for (int y = row_begin; y < row_end; ++y) {
    const uint8_t* src = in.row(y);
    uint8_t* dst = out.row(y - row_begin);
    for (int xx = 0; xx < out_width; ++xx) {
      const int first = c.first[static_cast<size_t>(xx)];
      const int count = c.count[static_cast<size_t>(xx)];
      const int32_t* w = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
      for (int ch = 0; ch < channels; ++ch) {
        int64_t sum = int64_t{1} << (kPrecisionBits - 1);
        const uint8_t* p = src + static_cast<size_t>(first) * static_cast<size_t>(channels) + ch;
        for (int x = 0; x < count; ++x) sum += static_cast<int64_t>(p[static_cast<size_t>(x) * channels]) * w[x];
        dst[static_cast<size_t>(xx) * static_cast<size_t>(channels) + ch] = clip8(sum);
      }
    }
  }
}

// `in` resampled along y; `row_offset`: the input row that in's row 0 stands for.
void vertical(const Image& in, int row_offset, const Coefficients& c, int out_height, Image& out) {
  const size_t row_bytes = in.row_bytes();
  out.reshape(out_height, in.width, in.channels);
  for (int yy = 0; yy < out_height; ++yy) {
    const int first = c.first[static_cast<size_t>(yy)] - row_offset;
    const int count = c.count[static_cast<size_t>(yy)];
    const int32_t* w = &c.weights[static_cast<size_t>(yy) * static_cast<size_t>(c.taps)];
    uint8_t* dst = out.row(yy);
    for (size_t i = 0; i < row_bytes; ++i) {
      int64_t sum = int64_t{1} << (kPrecisionBits - 1);
      for (int y = 0; y < count; ++y) sum += static_cast<int64_t>(in.row(first + y)[i]) * w[y];
      dst[i] = clip8(sum);
    }
  }
}

}  // namespace

void resize_bilinear(const Image& in, int out_height, int out_width, Image& out, Image& scratch) {
  const bool need_horizontal = out_width != in.width;
  const bool need_vertical = out_height != in.height;
  if (!need_horizontal && !need_vertical) {
    out = in;
    return;
  }
  if (need_horizontal && !need_vertical) {
    horizontal(in, 0, in.height, coefficients(in.width, out_width), out_width, out);
    return;
  }
  const Coefficients vc = coefficients(in.height, out_height);
  if (!need_horizontal) {
    vertical(in, 0, vc, out_height, out);
    return;
  }
  // Only the rows the vertical pass reads go through the horizontal one (as in Pillow).
  const int row_begin = vc.first.front();
  const int row_end = vc.first.back() + vc.count.back();
  horizontal(in, row_begin, row_end, coefficients(in.width, out_width), out_width, scratch);
  vertical(scratch, row_begin, vc, out_height, out);
}

Size shorter_side_resized(int height, int width, int size) {
  if (width <= height) {
    return {static_cast<int>(static_cast<int64_t>(size) * height / width), size};
  }
  return {size, static_cast<int>(static_cast<int64_t>(size) * width / height)};
}

}  // namespace trainer::image
