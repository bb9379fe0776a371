// Decoding image files into 8-bit gray or RGB, with the libraries chosen by measurement
// (bench/image_decode/README.md): libjpeg-turbo for JPEG, libpng for PNG, libwebp for WebP, our
// own reader for PPM/PGM, OpenCV's imgcodecs for BMP and TIFF. The format is read from the file's
// first bytes, not its name. Colour conversion follows Pillow's convert("RGB") / convert("L"),
// which torchvision's ImageFolder loader applies: gray is repeated into RGB, RGB becomes gray by
// ITU-R 601-2 luma, alpha is dropped (not composited), palettes are expanded; 16-bit samples keep
// their high byte. A truncated or corrupt file is an error, never a silently gray image.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainer/image/image.h"
#include "trainer/util/error.h"

namespace trainer::image {

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kPnm, kBmp, kTiff };

// The format the bytes start with (magic numbers), kUnknown for anything else.
ImageFormat sniff_format(const uint8_t* data, size_t size);
const char* format_name(ImageFormat format);

struct DecodeRequest {
  int channels = 3;  // 1 (gray) or 3 (RGB)
  // JPEG only: when both are positive, the decoder may shrink by 1/2, 1/4 or 1/8 in the DCT domain
  // (libjpeg's scale_denom), to the smallest such size whose sides are still at least these. Its
  // pixels then differ a little from a full decode followed by a resize.
  int min_height = 0;
  int min_width = 0;
  // JPEG only, when its sides are positive: decode just this box of the stored image (in its
  // pixels), which must lie inside it; min_height/min_width then bound the box's shrunk size. The
  // rows and columns around the box are entropy-decoded (damage anywhere is still found) but never
  // transformed to pixels. Unshrunk, the pixels are a full decode's, cropped.
  CropBox region;
};

// A file that is not a readable image of a supported format: truncated, corrupt, empty or of
// another kind. Datasets catch exactly this type for data.on_bad_sample=skip.
class BadImage : public Error {
 public:
  using Error::Error;
};

// Decodes `size` bytes into `out` (its buffer reused). `name` (the file's path) goes into errors.
// Throws BadImage.
void decode_image(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name);

// A JPEG's stored size, from its header alone; nullopt for any other format or a header that
// does not read (decode_image then says why). Only JPEG decodes a region (DecodeRequest::region).
std::optional<Size> jpeg_size(const uint8_t* data, size_t size);

// Reads the file at `path` into `buffer` (reused). Throws BadImage when it cannot be read or is not
// a regular file.
void read_file(const std::string& path, std::vector<uint8_t>& buffer);

// Reads the file at `path` into `buffer` (reused) and decodes it. Throws BadImage, also when the
// file cannot be read.
void read_image(const std::string& path, const DecodeRequest& request, std::vector<uint8_t>& buffer, Image& out);

}  // namespace trainer::image
