// PNG through libpng's classic API (measured faster than libspng and OpenCV on most layouts:
// bench/image_decode). Palettes and low bit depths are expanded, 16-bit samples keep their high
// byte, and the file's own channels (gray, gray + alpha, RGB, RGBA) are then converted as Pillow
// converts them. libpng reports errors by longjmp into decode_into, which holds no object with a
// destructor across the jump.
#include <png.h>

#include <csetjmp>
#include <cstring>
#include <vector>

#include "decoders.h"

namespace trainer::image::detail {
namespace {

struct Source {
  const uint8_t* data;
  size_t size;
  size_t offset;
  char message[256];
};

void read_bytes(png_structp png, png_bytep out, png_size_t length) {
  auto* source = static_cast<Source*>(png_get_io_ptr(png));
  if (length > source->size - source->offset) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, source->data + source->offset, length);
  source->offset += length;
}

void on_error(png_structp png, png_const_charp message) {
  auto* source = static_cast<Source*>(png_get_error_ptr(png));
  std::strncpy(source->message, message, sizeof(source->message) - 1);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // ancillary-chunk trouble: the pixels are sound

int decode_into(png_structp png, png_infop info, Image& out, std::vector<png_bytep>& rows) {
  if (setjmp(png_jmpbuf(png)) != 0) return 1;
  png_read_info(png, info);
  const auto stored_height = static_cast<int64_t>(png_get_image_height(png, info));
  const auto stored_width = static_cast<int64_t>(png_get_image_width(png, info));
  if (stored_height <= 0 || stored_width <= 0 || stored_height > kMaxPixels / stored_width) return 2;
  const png_byte color = png_get_color_type(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS) != 0) png_set_tRNS_to_alpha(png);
  png_set_strip_16(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const auto height = static_cast<int>(png_get_image_height(png, info));
  const auto width = static_cast<int>(png_get_image_width(png, info));
  const int channels = png_get_channels(png, info);
  out.reshape(height, width, channels);
  rows.resize(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) rows[static_cast<size_t>(y)] = out.row(y);
  png_read_image(png, rows.data());
  // No png_read_end: once every row has decoded (the last IDAT's checksum checked), a missing or
  // damaged trailer (IEND, chunks after the data) loses nothing, and Pillow reads such files too.
  return 0;
}

}  // namespace

void decode_png(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name) {
  Source source{data, size, 0, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, on_error, on_warning);
  png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
  if (png == nullptr || info == nullptr) {
    png_destroy_read_struct(&png, &info, nullptr);
    bad_image(name, "PNG", "libpng could not start (out of memory)");
  }
  png_set_read_fn(png, &source, read_bytes);
  std::vector<png_bytep> rows;
  int failed = 0;
  try {
    failed = decode_into(png, info, out, rows);
  } catch (...) {  // std::bad_alloc from the image's buffer: free libpng's state too
    png_destroy_read_struct(&png, &info, nullptr);
    throw;
  }
  const auto height = static_cast<int64_t>(png_get_image_height(png, info));
  const auto width = static_cast<int64_t>(png_get_image_width(png, info));
  png_destroy_read_struct(&png, &info, nullptr);
  if (failed == 2) check_size(name, "PNG", height, width);
  if (failed != 0) bad_image(name, "PNG", source.message);
  convert_channels(out, request.channels);
}

}  // namespace trainer::image::detail
