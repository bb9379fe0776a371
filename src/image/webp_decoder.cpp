// WebP through libwebp: RGB (or RGBA, alpha then dropped) straight into the image's buffer.
// Lossy WebP carries no checksum, so damage inside the data can go unnoticed; a truncated file is
// refused.
#include <webp/decode.h>

#include "decoders.h"

namespace trainer::image::detail {

void decode_webp(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(data, size, &features);
  if (status != VP8_STATUS_OK) {
    bad_image(
        name, "WebP",
        status == VP8_STATUS_NOT_ENOUGH_DATA ? "the file ends early (truncated)" : "its header is not valid WebP");
  }
  if (features.has_animation != 0) bad_image(name, "WebP", "it is animated; only still images are read");
  check_size(name, "WebP", features.height, features.width);
  out.reshape(features.height, features.width, 3);
  if (WebPDecodeRGBInto(data, size, out.pixels.data(), out.pixels.size(), static_cast<int>(out.row_bytes())) ==
      nullptr) {
    bad_image(name, "WebP", "the image data is truncated or corrupt");
  }
  convert_channels(out, request.channels);
}

}  // namespace trainer::image::detail
