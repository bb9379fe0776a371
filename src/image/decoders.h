// The per-format decoders behind decode_image (image_decoder.cpp), one file each. Each fills
// `out` with the file's own layout converted to `request.channels`, or throws BadImage naming
// `name`. Private to the image module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "trainer/image/image.h"
#include "trainer/image/image_decoder.h"

namespace trainer::image::detail {

void decode_jpeg(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name);
std::optional<Size> jpeg_header_size(const uint8_t* data, size_t size);
void decode_png(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name);
void decode_webp(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name);
void decode_pnm(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name);
// BMP and TIFF, through OpenCV's imgcodecs.
void decode_with_opencv(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out,
                        const std::string& name);

// Converts `image` (1, 3 or 4 channels; 2 = gray + alpha) in place to `channels` (1 or 3), as
// Pillow's convert does: alpha dropped, gray repeated, RGB to luma.
void convert_channels(Image& image, int channels);

// The error for a file the decoder refused: "<name>: cannot decode this <format> file (<why>)".
[[noreturn]] void bad_image(const std::string& name, const std::string& format, const std::string& why);

// Refuses sizes a sane image does not have, before anything is allocated for it: a side of 0, or
// more pixels than Pillow opens (2 x Image.MAX_IMAGE_PIXELS, its "decompression bomb" limit), which a
// corrupt or hostile header can claim in a few bytes.
void check_size(const std::string& name, const std::string& format, int64_t height, int64_t width);
constexpr int64_t kMaxPixels = 2 * int64_t{89478485};

}  // namespace trainer::image::detail
