// BMP and TIFF through OpenCV's imgcodecs: the rarer formats, where a well-kept decoder of every
// variant matters more than speed. OpenCV hands back BGR(A); EXIF orientation is not applied
// (IMREAD_IGNORE_ORIENTATION), as Pillow does not apply it either.
#include <climits>
#include <utility>

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include "decoders.h"

namespace trainer::image::detail {

void decode_with_opencv(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out,
                        const std::string& name) {
  // OpenCV prints its decoders' complaints to stderr; the BadImage below says it once, with the file.
  static const bool quiet = [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    return true;
  }();
  (void)quiet;
  const std::string format = sniff_format(data, size) == ImageFormat::kBmp ? "BMP" : "TIFF";
  // A BMP says its own size (bytes 2..5, little-endian): a shorter file is refused here, before
  // OpenCV, whose BMP reader prints a complaint of its own to stderr on every truncated file.
  if (format == "BMP" && size >= 6) {
    const uint32_t declared =
        uint32_t{data[2]} | uint32_t{data[3]} << 8 | uint32_t{data[4]} << 16 | uint32_t{data[5]} << 24;
    if (declared > size) bad_image(name, format, "the file ends early (truncated)");
  }
  if (size > static_cast<size_t>(INT_MAX)) bad_image(name, format, "it is larger than 2 GiB, more than OpenCV reads");
  cv::Mat decoded;
  try {
    const cv::Mat bytes(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(data));
    decoded = cv::imdecode(bytes, cv::IMREAD_UNCHANGED | cv::IMREAD_IGNORE_ORIENTATION);
  } catch (const cv::Exception& e) {
    const std::string what = e.what();  // OpenCV's text runs over several lines: the first says it
    bad_image(name, format, what.substr(0, what.find('\n')));
  }
  if (decoded.empty())
    bad_image(name, format, "OpenCV could not read it (truncated, corrupt or an unsupported variant)");
  const bool wide = decoded.depth() == CV_16U;
  if (decoded.depth() != CV_8U && !wide) bad_image(name, format, "its samples are not 8 or 16-bit integers");
  const int channels = decoded.channels();
  if (channels != 1 && channels != 3 && channels != 4) {
    bad_image(name, format, "it has " + std::to_string(channels) + " channels (1, 3 or 4 are read)");
  }
  out.reshape(decoded.rows, decoded.cols, channels);
  const size_t samples = static_cast<size_t>(decoded.cols) * static_cast<size_t>(channels);
  for (int y = 0; y < decoded.rows; ++y) {
    uint8_t* row = out.row(y);
    for (size_t i = 0; i < samples; ++i) {  // 16-bit samples keep their high byte
      row[i] = wide ? static_cast<uint8_t>(decoded.ptr<uint16_t>(y)[i] >> 8) : decoded.ptr<uint8_t>(y)[i];
    }
    if (channels == 1) continue;
    for (size_t i = 0; i < samples; i += static_cast<size_t>(channels)) std::swap(row[i], row[i + 2]);  // BGR to RGB
  }
  convert_channels(out, request.channels);
}

}  // namespace trainer::image::detail
