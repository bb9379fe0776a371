#include "trainer/image/image_decoder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "decoders.h"

namespace trainer::image {
namespace {

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t length) {
  return size >= length && std::memcmp(data, magic, length) == 0;
}

inline uint8_t luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

}  // namespace

ImageFormat sniff_format(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "\xFF\xD8\xFF", 3)) return ImageFormat::kJpeg;
  if (starts_with(data, size, "\x89PNG\r\n\x1A\n", 8)) return ImageFormat::kPng;
  if (size >= 12 && starts_with(data, size, "RIFF", 4) && std::memcmp(data + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  if (size >= 2 && data[0] == 'P' && (data[1] == '2' || data[1] == '3' || data[1] == '5' || data[1] == '6')) {
    return ImageFormat::kPnm;
  }
  if (starts_with(data, size, "BM", 2)) return ImageFormat::kBmp;
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) return ImageFormat::kTiff;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kPnm:
      return "PPM/PGM";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

void decode_image(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name) {
  if (request.channels != 1 && request.channels != 3) {
    throw Error(name, "cannot decode to " + std::to_string(request.channels) + " channels (1 or 3)");
  }
  switch (sniff_format(data, size)) {
    case ImageFormat::kJpeg:
      return detail::decode_jpeg(data, size, request, out, name);
    case ImageFormat::kPng:
      return detail::decode_png(data, size, request, out, name);
    case ImageFormat::kWebp:
      return detail::decode_webp(data, size, request, out, name);
    case ImageFormat::kPnm:
      return detail::decode_pnm(data, size, request, out, name);
    case ImageFormat::kBmp:
    case ImageFormat::kTiff:
      return detail::decode_with_opencv(data, size, request, out, name);
    case ImageFormat::kUnknown:
      break;
  }
  throw BadImage(name,
                 size == 0 ? std::string("the file is empty")
                           : "not an image of a supported format (its first bytes are not a JPEG, PNG, WebP, "
                             "PPM/PGM, BMP or TIFF signature)",
                 "Replace or remove the file; an image's extension must match what it holds.");
}

std::optional<Size> jpeg_size(const uint8_t* data, size_t size) {
  if (sniff_format(data, size) != ImageFormat::kJpeg) return std::nullopt;
  return detail::jpeg_header_size(data, size);
}

void read_file(const std::string& path, std::vector<uint8_t>& buffer) {
  // O_NONBLOCK: opening a FIFO (or a device) named like an image must not wait forever for a
  // writer; anything but a regular file is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw BadImage(path, "cannot open the image: " + std::generic_category().message(errno),
                   "Check that the file exists and that this user may read it.");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw BadImage(path, "cannot read the image: " + std::generic_category().message(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw BadImage(path, "is not a regular file (a FIFO, socket or device named like an image)",
                   "Remove it from the image folder, or rename it without an image extension.");
  }
  buffer.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + done, buffer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : 0;
      ::close(fd);
      throw BadImage(path, "cannot read the image: " + (error != 0 ? std::generic_category().message(error)
                                                                   : std::string("it shrank while read")));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

void read_image(const std::string& path, const DecodeRequest& request, std::vector<uint8_t>& buffer, Image& out) {
  read_file(path, buffer);
  decode_image(buffer.data(), buffer.size(), request, out, path);
}

namespace detail {

void convert_channels(Image& image, int channels) {
  const int from = image.channels;
  if (from == channels) return;
  const size_t pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  uint8_t* p = image.pixels.data();
  if (channels == 1) {
    // In place, front to back: pixel i's output never overwrites an input not yet read.
    for (size_t i = 0; i < pixels; ++i) {
      const uint8_t* in = p + i * static_cast<size_t>(from);
      p[i] = from >= 3 ? luma(in) : in[0];  // 3/4: luma of RGB; 2: the gray of gray + alpha
    }
  } else if (from == 1 || from == 2) {
    image.pixels.resize(pixels * 3);
    p = image.pixels.data();
    // Back to front, so that the growing output does not overwrite unread input.
    for (size_t i = pixels; i-- > 0;) {
      const uint8_t gray = p[i * static_cast<size_t>(from)];
      p[i * 3] = p[i * 3 + 1] = p[i * 3 + 2] = gray;
    }
  } else {  // 4 -> 3: drop alpha, front to back
    for (size_t i = 0; i < pixels; ++i) {
      p[i * 3] = p[i * 4];
      p[i * 3 + 1] = p[i * 4 + 1];
      p[i * 3 + 2] = p[i * 4 + 2];
    }
  }
  image.channels = channels;
  image.pixels.resize(pixels * static_cast<size_t>(channels));
}

void check_size(const std::string& name, const std::string& format, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0) bad_image(name, format, "its header gives a size of 0");
  if (height > kMaxPixels / width) {
    bad_image(name, format,
              "its header claims " + std::to_string(width) + " x " + std::to_string(height) + " pixels, more than " +
                  std::to_string(kMaxPixels) + " (Pillow's limit against decompression bombs)");
  }
}

void bad_image(const std::string& name, const std::string& format, const std::string& why) {
  throw BadImage(name, "cannot decode this " + format + " file: " + why,
                 "The file is truncated, corrupt or not what its extension says; replace or remove it.");
}

}  // namespace detail
}  // namespace trainer::image
