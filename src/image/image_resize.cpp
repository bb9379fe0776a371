#include "trainer/image/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define TRAINER_RESIZE_SSE41 1
#endif

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
// point (Pillow's precompute_coeffs + normalize_coeffs_8bpc). Filled in place, so a thread that
// keeps one reuses its buffers from image to image instead of allocating per sample.
struct Coefficients {
  int taps = 0;                   // weights per output index (the widest window)
  std::vector<int> first, count;  // per output index
  std::vector<int32_t> weights;   // out_size * taps
  std::vector<double> kernel;     // one window's weights before normalising
};

void compute_coefficients(int in_size, int out_size, Coefficients& c) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // the bilinear filter's support is 1
  c.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<size_t>(out_size));
  c.count.resize(static_cast<size_t>(out_size));
  c.weights.assign(static_cast<size_t>(out_size) * static_cast<size_t>(c.taps), 0);
  c.kernel.resize(static_cast<size_t>(c.taps));
  double* k = c.kernel.data();
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
      k[x] = w;
      total += w;
    }
    int32_t* out = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
    for (int x = 0; x < xmax; ++x) {
      const double w = total != 0.0 ? k[x] / total : k[x];
      const double fixed = w * (1 << kPrecisionBits);
      out[x] = static_cast<int32_t>(w < 0 ? std::trunc(-0.5 + fixed) : std::trunc(0.5 + fixed));
    }
    c.first[static_cast<size_t>(xx)] = xmin;
    c.count[static_cast<size_t>(xx)] = xmax;
  }
}

// One per loader thread: the coefficients and the vertical pass's sums, reused from image to image.
struct ResizeBuffers {
  Coefficients horizontal, vertical;
  std::vector<int32_t> sums;
};

// Sums in 32 bits as Pillow's 8-bit path does: the weights are non-negative and sum to about
// 2^22, so 255 * 2^22 plus the rounding half stays below 2^31.
constexpr int32_t kHalf = int32_t{1} << (kPrecisionBits - 1);

inline uint8_t clip8(int32_t sum) {
  const int32_t v = sum >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Rows [row_begin, row_end) of `in`, resampled along x, into `out` (rows 0..). `Channels` fixed at
// compile time keeps one accumulator per channel in a register (1 and 3, the images' channels).
template <int Channels>
void horizontal_fixed(const Image& in, int row_begin, int row_end, const Coefficients& c, int out_width, Image& out) {
  for (int y = row_begin; y < row_end; ++y) {
    const uint8_t* src = in.row(y);
    uint8_t* dst = out.row(y - row_begin);
    for (int xx = 0; xx < out_width; ++xx) {
      const int count = c.count[static_cast<size_t>(xx)];
      const int32_t* w = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
      const uint8_t* p = src + static_cast<size_t>(c.first[static_cast<size_t>(xx)]) * Channels;
      int32_t sum[Channels];
      for (int ch = 0; ch < Channels; ++ch) sum[ch] = kHalf;
      for (int x = 0; x < count; ++x) {
        for (int ch = 0; ch < Channels; ++ch) sum[ch] += static_cast<int32_t>(p[x * Channels + ch]) * w[x];
      }
      for (int ch = 0; ch < Channels; ++ch) dst[xx * Channels + ch] = clip8(sum[ch]);
    }
  }
}

#ifdef TRAINER_RESIZE_SSE41
// The 3-channel pass with SSE4.1: a tap's pixel (its three samples and the byte after them,
// whose lane is dropped) widened to 32 bits and multiplied by the tap's weight at once. The sums
// are integers, so these are the scalar loop's bytes (and Pillow's). The last pixel of the buffer
// is read without the byte after it.
__attribute__((target("sse4.1"))) void horizontal3_sse41(const Image& in, int row_begin, int row_end,
                                                         const Coefficients& c, int out_width, Image& out) {
  const uint8_t* end = in.pixels.data() + in.pixels.size();
  const __m128i half = _mm_set1_epi32(kHalf);
  for (int y = row_begin; y < row_end; ++y) {
    const uint8_t* src = in.row(y);
    uint8_t* dst = out.row(y - row_begin);
    for (int xx = 0; xx < out_width; ++xx) {
      const int count = c.count[static_cast<size_t>(xx)];
      const int32_t* w = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
      const uint8_t* p = src + static_cast<size_t>(c.first[static_cast<size_t>(xx)]) * 3;
      __m128i sum = half;
      for (int x = 0; x < count; ++x, p += 3) {
        int32_t four = 0;
        if (end - p >= 4) {
          std::memcpy(&four, p, 4);
        } else {
          std::memcpy(&four, p, 3);
        }
        const __m128i pixel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(four));
        sum = _mm_add_epi32(sum, _mm_mullo_epi32(pixel, _mm_set1_epi32(w[x])));
      }
      // clip8 on each lane: the shift, then saturation to int16 and to uint8 (0..255).
      const __m128i shifted = _mm_srai_epi32(sum, kPrecisionBits);
      const __m128i words = _mm_packs_epi32(shifted, shifted);
      const int32_t bytes = _mm_cvtsi128_si32(_mm_packus_epi16(words, words));
      std::memcpy(dst + static_cast<size_t>(xx) * 3, &bytes, 3);
    }
  }
}
#endif

// Whether the SSE4.1 pass runs: on a CPU that has it, unless ATEN_CPU_CAPABILITY=default asks for
// plain loops (as it does of ATen's own kernels; the tests run both).
bool sse41_pass() {
#ifdef TRAINER_RESIZE_SSE41
  static const bool chosen = [] {
    __builtin_cpu_init();
    const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
    if (forced != nullptr && std::string(forced) == "default") return false;
    return __builtin_cpu_supports("sse4.1") != 0;
  }();
  return chosen;
#else
  return false;
#endif
}

void horizontal(const Image& in, int row_begin, int row_end, const Coefficients& c, int out_width, Image& out) {
  const int channels = in.channels;
  out.reshape(row_end - row_begin, out_width, channels);
#ifdef TRAINER_RESIZE_SSE41
  if (channels == 3 && sse41_pass()) return horizontal3_sse41(in, row_begin, row_end, c, out_width, out);
#endif
  if (channels == 3) return horizontal_fixed<3>(in, row_begin, row_end, c, out_width, out);
  if (channels == 1) return horizontal_fixed<1>(in, row_begin, row_end, c, out_width, out);
  for (int y = row_begin; y < row_end; ++y) {
    const uint8_t* src = in.row(y);
    uint8_t* dst = out.row(y - row_begin);
    for (int xx = 0; xx < out_width; ++xx) {
      const int first = c.first[static_cast<size_t>(xx)];
      const int count = c.count[static_cast<size_t>(xx)];
      const int32_t* w = &c.weights[static_cast<size_t>(xx) * static_cast<size_t>(c.taps)];
      for (int ch = 0; ch < channels; ++ch) {
        int32_t sum = kHalf;
        const uint8_t* p = src + static_cast<size_t>(first) * static_cast<size_t>(channels) + ch;
        for (int x = 0; x < count; ++x) sum += static_cast<int32_t>(p[static_cast<size_t>(x) * channels]) * w[x];
        dst[static_cast<size_t>(xx) * static_cast<size_t>(channels) + ch] = clip8(sum);
      }
    }
  }
}

// `in` resampled along y; `row_offset`: the input row that in's row 0 stands for. Each output row
// accumulates whole input rows (one weight each) into a row of 32-bit sums: contiguous loads the
// compiler turns into vector multiply-adds, the same sums in the same order as Pillow's.
void vertical(const Image& in, int row_offset, const Coefficients& c, int out_height, Image& out,
              std::vector<int32_t>& sums) {
  const size_t row_bytes = in.row_bytes();
  out.reshape(out_height, in.width, in.channels);
  sums.resize(row_bytes);
  int32_t* acc = sums.data();
  for (int yy = 0; yy < out_height; ++yy) {
    const int first = c.first[static_cast<size_t>(yy)] - row_offset;
    const int count = c.count[static_cast<size_t>(yy)];
    const int32_t* w = &c.weights[static_cast<size_t>(yy) * static_cast<size_t>(c.taps)];
    for (size_t i = 0; i < row_bytes; ++i) acc[i] = kHalf;
    for (int y = 0; y < count; ++y) {
      const uint8_t* src = in.row(first + y);
      const int32_t weight = w[y];
      for (size_t i = 0; i < row_bytes; ++i) acc[i] += static_cast<int32_t>(src[i]) * weight;
    }
    uint8_t* dst = out.row(yy);
    for (size_t i = 0; i < row_bytes; ++i) dst[i] = clip8(acc[i]);
  }
}

ResizeBuffers& thread_scratch() {
  thread_local ResizeBuffers scratch;
  return scratch;
}

}  // namespace

void resize_bilinear(const Image& in, int out_height, int out_width, Image& out, Image& scratch) {
  const bool need_horizontal = out_width != in.width;
  const bool need_vertical = out_height != in.height;
  if (!need_horizontal && !need_vertical) {
    out = in;
    return;
  }
  ResizeBuffers& reuse = thread_scratch();
  if (need_horizontal) compute_coefficients(in.width, out_width, reuse.horizontal);
  if (!need_vertical) {
    horizontal(in, 0, in.height, reuse.horizontal, out_width, out);
    return;
  }
  const Coefficients& vc = reuse.vertical;
  compute_coefficients(in.height, out_height, reuse.vertical);
  if (!need_horizontal) {
    vertical(in, 0, vc, out_height, out, reuse.sums);
    return;
  }
  // Only the rows the vertical pass reads go through the horizontal one (as in Pillow).
  const int row_begin = vc.first.front();
  const int row_end = vc.first.back() + vc.count.back();
  horizontal(in, row_begin, row_end, reuse.horizontal, out_width, scratch);
  vertical(scratch, row_begin, vc, out_height, out, reuse.sums);
}

Size shorter_side_resized(int height, int width, int size) {
  if (width <= height) {
    return {static_cast<int>(static_cast<int64_t>(size) * height / width), size};
  }
  return {size, static_cast<int>(static_cast<int64_t>(size) * width / height)};
}

}  // namespace trainer::image
