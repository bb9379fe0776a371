// JPEG through libjpeg-turbo's libjpeg API. Errors come back through longjmp from libjpeg's error
// handler into decode_into (which holds no object with a destructor across the jump); the warnings
// libjpeg gives for truncated or corrupt pixel data, while still returning an image, count as
// errors too (on_message).
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

// jpeglib.h uses FILE and size_t without including their headers: it must come after <cstdio>;
// jerror.h (the message codes) after jpeglib.h.
#include <jpeglib.h>
// clang-format off
#include <jerror.h>
// clang-format on

#include "decoders.h"

namespace trainer::image::detail {
namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg's warnings that mean the pixels are damaged: the entropy-coded data is corrupt, or the
// file ends before the last row. These stop the decode, so a damaged image is never handed on as
// if it were sound (Pillow ignores them, except running out of data, and returns garbled pixels).
// Other warnings concern metadata or stray bytes between markers ("extraneous bytes", unknown
// JFIF or Adobe versions): the image is intact, and Pillow reads it too.
void on_message(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  const int code = info->err->msg_code;
  bool damaged =
      code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE || code == JWRN_MUST_RESYNC || code == JWRN_ARITH_BAD_CODE;
  if (code == JWRN_JPEG_EOF) {
    // Missing only the end marker after the last row is harmless; missing rows is truncation.
    const auto* decompress = reinterpret_cast<j_decompress_ptr>(info);
    damaged = decompress->output_height == 0 || decompress->output_scanline < decompress->output_height;
  }
  if (damaged) on_error(info);
}

// The largest libjpeg scale 1/denominator (1, 2, 4, 8) that keeps both sides at least the minimum.
unsigned scale_denominator(unsigned height, unsigned width, int min_height, int min_width) {
  if (min_height <= 0 || min_width <= 0) return 1;
  unsigned chosen = 1;
  for (unsigned denominator : {2u, 4u, 8u}) {
    const unsigned h = (height + denominator - 1) / denominator, w = (width + denominator - 1) / denominator;
    if (h >= static_cast<unsigned>(min_height) && w >= static_cast<unsigned>(min_width)) chosen = denominator;
  }
  return chosen;
}

// The same for a region: the largest 1/denominator at which the box's sides, shrunk (rounded
// down, as the box is cut from the shrunk image), stay at least the minimum.
unsigned region_denominator(const CropBox& box, int min_height, int min_width) {
  if (min_height <= 0 || min_width <= 0) return 1;
  unsigned chosen = 1;
  for (int denominator : {2, 4, 8}) {
    if (box.height / denominator >= min_height && box.width / denominator >= min_width) {
      chosen = static_cast<unsigned>(denominator);
    }
  }
  return chosen;
}

// Pillow's CMYK -> RGB (after undoing Adobe's inversion): each channel (255 - K) scaled by
// (255 - C), with its rounding of x * y / 255.
inline uint8_t cmyk_channel(int c, int k) {
  const int nk = 255 - k;
  const int t = c * nk + 128;
  const int product = ((t >> 8) + t) >> 8;
  const int v = nk - product;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// 0 on success; else libjpeg's message is in errors.message. Plain data only in this frame.
int decode_into(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, ErrorManager& errors,
                jpeg_decompress_struct& info) {
  if (setjmp(errors.jump) != 0) return 1;
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, static_cast<unsigned long>(size));
  jpeg_read_header(&info, TRUE);
  if (info.image_height == 0 || info.image_width == 0 ||
      static_cast<int64_t>(info.image_height) > kMaxPixels / static_cast<int64_t>(info.image_width)) {
    return 2;  // refused by size (check_size says why, outside this frame)
  }
  const bool cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
  const bool gray_source = info.jpeg_color_space == JCS_GRAYSCALE;
  if (cmyk) {
    info.out_color_space = JCS_CMYK;
  } else {
    // Gray files decode to gray; colour files to RGB, then to luma if gray is asked for (Pillow
    // decodes to RGB and converts, which differs slightly from taking libjpeg's Y channel).
    info.out_color_space = gray_source ? JCS_GRAYSCALE : JCS_RGB;
  }
  const CropBox& box = request.region;
  const bool region = box.height > 0 && box.width > 0;
  if (region && (box.top < 0 || box.left < 0 || static_cast<unsigned>(box.top + box.height) > info.image_height ||
                 static_cast<unsigned>(box.left + box.width) > info.image_width)) {
    return 3;  // a box outside the image: the caller's mistake (decode_jpeg throws)
  }
  info.scale_num = 1;
  info.scale_denom =
      region ? region_denominator(box, request.min_height, request.min_width)
             : scale_denominator(info.image_height, info.image_width, request.min_height, request.min_width);
  jpeg_start_decompress(&info);
  const int channels = info.output_components;
  if (!region) {
    out.reshape(static_cast<int>(info.output_height), static_cast<int>(info.output_width), channels);
    while (info.output_scanline < info.output_height) {
      JSAMPROW row = out.row(static_cast<int>(info.output_scanline));
      jpeg_read_scanlines(&info, &row, 1);
    }
  } else {
    // The box in the shrunk image's pixels (the output is ceil(stored / d) on each side, so the
    // rounded-down box lies inside it). libjpeg widens the decoded columns to whole iMCUs; the
    // rows are decoded that wide into `out`, then each is moved left to the box's columns. One
    // more column on each side is asked for: at the edges of the columns it decodes, libjpeg
    // upsamples the chroma from the edge sample alone (as at the image's own edges), so the
    // box's first or last pixel would differ from a full decode's when it lay there.
    const auto d = static_cast<int>(info.scale_denom);
    const int top = box.top / d, left = box.left / d;
    const int height = std::max(1, box.height / d), width = std::max(1, box.width / d);
    const int begin = std::max(0, left - 1);
    const int end = std::min(static_cast<int>(info.output_width), left + width + 1);
    JDIMENSION first_column = static_cast<JDIMENSION>(begin), columns = static_cast<JDIMENSION>(end - begin);
    jpeg_crop_scanline(&info, &first_column, &columns);
    const auto wide = static_cast<int>(columns);
    out.reshape(height + 1, wide, channels);  // one spare row for the image's last
    if (top > 0) jpeg_skip_scanlines(&info, static_cast<JDIMENSION>(top));
    for (int y = 0; y < height; ++y) {
      JSAMPROW row = out.row(y);
      jpeg_read_scanlines(&info, &row, 1);
    }
    // The rows below the box are entropy-decoded only (damage there is still an error), but the
    // last is read: a skip to the very end would decode nothing.
    if (info.output_scanline + 1 < info.output_height) {
      jpeg_skip_scanlines(&info, info.output_height - info.output_scanline - 1);
    }
    if (info.output_scanline < info.output_height) {
      JSAMPROW row = out.row(height);
      jpeg_read_scanlines(&info, &row, 1);
    }
    const size_t shift = static_cast<size_t>(left - static_cast<int>(first_column)) * static_cast<size_t>(channels);
    const size_t kept = static_cast<size_t>(width) * static_cast<size_t>(channels);
    const size_t stride = static_cast<size_t>(wide) * static_cast<size_t>(channels);
    uint8_t* pixels = out.pixels.data();
    for (int y = 0; y < height; ++y) {  // front to back: a row never lands on one not yet moved
      std::memmove(pixels + static_cast<size_t>(y) * kept, pixels + static_cast<size_t>(y) * stride + shift, kept);
    }
    out.reshape(height, width, channels);
  }
  jpeg_finish_decompress(&info);
  if (cmyk) {
    const bool inverted = true;  // as Pillow, which assumes Adobe's inverted CMYK for every file
    const size_t pixels = static_cast<size_t>(out.height) * static_cast<size_t>(out.width);
    uint8_t* p = out.pixels.data();
    for (size_t i = 0; i < pixels; ++i) {
      uint8_t* q = p + i * 4;
      const int c = inverted ? 255 - q[0] : q[0], m = inverted ? 255 - q[1] : q[1];
      const int y = inverted ? 255 - q[2] : q[2], k = inverted ? 255 - q[3] : q[3];
      q[0] = cmyk_channel(c, k);
      q[1] = cmyk_channel(m, k);
      q[2] = cmyk_channel(y, k);
      q[3] = 255;
    }
  }
  return 0;
}

// The header's size, or nullopt when it does not read. Plain data only in this frame.
int read_size(const uint8_t* data, size_t size, ErrorManager& errors, jpeg_decompress_struct& info) {
  if (setjmp(errors.jump) != 0) return 1;
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, static_cast<unsigned long>(size));
  jpeg_read_header(&info, TRUE);
  return 0;
}

}  // namespace

std::optional<Size> jpeg_header_size(const uint8_t* data, size_t size) {
  ErrorManager errors{};
  jpeg_decompress_struct info{};
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_error;
  errors.base.emit_message = on_message;
  const int failed = read_size(data, size, errors, info);
  const Size stored{static_cast<int>(info.image_height), static_cast<int>(info.image_width)};
  jpeg_destroy_decompress(&info);
  if (failed != 0 || stored.height <= 0 || stored.width <= 0) return std::nullopt;
  return stored;
}

void decode_jpeg(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name) {
  ErrorManager errors{};
  jpeg_decompress_struct info{};
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_error;
  errors.base.emit_message = on_message;
  int failed = 0;
  try {
    failed = decode_into(data, size, request, out, errors, info);
  } catch (...) {  // std::bad_alloc from the image's buffer: free libjpeg's state too
    jpeg_destroy_decompress(&info);
    throw;
  }
  jpeg_destroy_decompress(&info);
  if (failed == 2) check_size(name, "JPEG", info.image_height, info.image_width);
  if (failed == 3) {
    throw std::logic_error(name + ": a JPEG region outside the " + std::to_string(info.image_height) + " x " +
                           std::to_string(info.image_width) + " image");
  }
  if (failed != 0) bad_image(name, "JPEG", errors.message);
  convert_channels(out, request.channels);
}

}  // namespace trainer::image::detail
