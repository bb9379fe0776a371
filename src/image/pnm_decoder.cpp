// PPM and PGM (netpbm P6/P5 binary, P3/P2 plain text), read here: the format is a short text
// header and raw samples, and this reader is 10-20x faster than OpenCV's on it
// (bench/image_decode). Samples scale to 0..255 from the file's maxval (rounded); 255 reads as is.
#include <algorithm>
#include <cctype>
#include <string>

#include "decoders.h"

namespace trainer::image::detail {
namespace {

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Whitespace and # comments (to the end of the line) before the next token.
  void skip_space() {
    while (at_ < size_) {
      if (data_[at_] == '#') {
        while (at_ < size_ && data_[at_] != '\n') ++at_;
      } else if (std::isspace(data_[at_]) != 0) {
        ++at_;
      } else {
        break;
      }
    }
  }
  // A decimal number, or -1 when there is none (or it is absurdly long).
  long number() {
    skip_space();
    long value = -1;
    int digits = 0;
    while (at_ < size_ && std::isdigit(data_[at_]) != 0 && digits < 9) {
      value = (value < 0 ? 0 : value * 10) + (data_[at_] - '0');
      ++at_;
      ++digits;
    }
    return value;
  }
  size_t at() const { return at_; }
  void advance(size_t n) { at_ += n; }
  size_t left() const { return size_ - at_; }
  const uint8_t* here() const { return data_ + at_; }
  bool at_space() const { return at_ < size_ && std::isspace(data_[at_]) != 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// round(value * 255 / maxval), halves to even as Python's round (Pillow scales this way).
inline uint8_t scaled(long value, long maxval) {
  if (value > maxval) value = maxval;  // binary samples only; a plain one above maxval is refused
  const long twice = 2 * value * 255, quotient = twice / (2 * maxval), remainder = twice % (2 * maxval);
  long result = quotient;
  if (remainder > maxval || (remainder == maxval && (quotient % 2) == 1)) ++result;
  return static_cast<uint8_t>(result);
}

}  // namespace

void decode_pnm(const uint8_t* data, size_t size, const DecodeRequest& request, Image& out, const std::string& name) {
  const char kind = static_cast<char>(data[1]);
  const int channels = kind == '3' || kind == '6' ? 3 : 1;
  const bool plain = kind == '2' || kind == '3';
  Cursor cursor(data, size);
  cursor.advance(2);
  const long width = cursor.number(), height = cursor.number(), maxval = cursor.number();
  if (width <= 0 || height <= 0 || maxval <= 0 || maxval > 65535) {
    bad_image(name, "PPM/PGM", "its header does not give a positive width, height and maxval (up to 65535)");
  }
  check_size(name, "PPM/PGM", height, width);
  const size_t samples = static_cast<size_t>(height) * static_cast<size_t>(width) * static_cast<size_t>(channels);
  // Enough bytes for the samples before anything is allocated for them (a plain sample takes at
  // least a digit and a separator).
  const size_t needed = plain ? 2 * samples - 1 : (cursor.at_space() ? 1 : 0) + samples * (maxval > 255 ? 2 : 1);
  if (cursor.left() < needed) bad_image(name, "PPM/PGM", "the file ends early (truncated)");
  out.reshape(static_cast<int>(height), static_cast<int>(width), channels);
  uint8_t* p = out.pixels.data();
  if (plain) {
    for (size_t i = 0; i < samples; ++i) {
      const long value = cursor.number();
      if (value < 0) bad_image(name, "PPM/PGM", "it ends early or holds a sample that is not a number");
      if (value > maxval) bad_image(name, "PPM/PGM", "a sample is above the maxval of its header");
      p[i] = scaled(value, maxval);
    }
  } else {
    if (!cursor.at_space()) bad_image(name, "PPM/PGM", "no whitespace after the header");
    cursor.advance(1);  // exactly one whitespace byte before the samples
    const size_t bytes_per_sample = maxval > 255 ? 2 : 1;
    if (cursor.left() < samples * bytes_per_sample) bad_image(name, "PPM/PGM", "the file ends early (truncated)");
    const uint8_t* in = cursor.here();
    if (bytes_per_sample == 1 && maxval == 255) {
      std::copy(in, in + samples, p);
    } else if (bytes_per_sample == 1) {
      for (size_t i = 0; i < samples; ++i) p[i] = scaled(in[i], maxval);
    } else {
      for (size_t i = 0; i < samples; ++i) p[i] = scaled((long{in[2 * i]} << 8) | in[2 * i + 1], maxval);
    }
  }
  convert_channels(out, request.channels);
}

}  // namespace trainer::image::detail
