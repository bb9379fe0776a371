#include "trainer/image/image_decoder.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "skip_test.h"
#include "temp_dir.h"
#include "test_process.h"

namespace fs = std::filesystem;
using trainer::testing::python_has;
using trainer::testing::shell_quote;
using trainer::testing::TempDir;
using trainer::testing::test_python;
using namespace trainer::image;

namespace {

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

Image decode_bytes(const std::vector<uint8_t>& bytes, int channels) {
  Image image;
  DecodeRequest request;
  request.channels = channels;
  decode_image(bytes.data(), bytes.size(), request, image, "test.img");
  return image;
}

Image decode_file(const std::string& path, int channels) {
  Image image;
  std::vector<uint8_t> buffer;
  DecodeRequest request;
  request.channels = channels;
  read_image(path, request, buffer, image);
  return image;
}

std::string bad_image_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const BadImage& e) {
    return e.what();
  }
  return "(no BadImage)";
}

}  // namespace

TEST_CASE("formats are recognised by their first bytes", "[image]") {
  auto sniff = [](const std::string& head) {
    return sniff_format(reinterpret_cast<const uint8_t*>(head.data()), head.size());
  };
  CHECK(sniff("\xFF\xD8\xFF\xE0") == ImageFormat::kJpeg);
  CHECK(sniff("\x89PNG\r\n\x1A\n....") == ImageFormat::kPng);
  CHECK(sniff(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)) == ImageFormat::kWebp);
  CHECK(sniff(std::string("RIFF\x10\0\0\0WAVEfmt ", 16)) == ImageFormat::kUnknown);
  CHECK(sniff("P6\n") == ImageFormat::kPnm);
  CHECK(sniff("P5\n") == ImageFormat::kPnm);
  CHECK(sniff("P4\n") == ImageFormat::kUnknown);  // PBM: not an ImageFolder extension
  CHECK(sniff("BM....") == ImageFormat::kBmp);
  CHECK(sniff(std::string("II*\0", 4)) == ImageFormat::kTiff);
  CHECK(sniff(std::string("MM\0*", 4)) == ImageFormat::kTiff);
  CHECK(sniff("") == ImageFormat::kUnknown);
  CHECK(sniff("GIF89a") == ImageFormat::kUnknown);
}

TEST_CASE("PPM and PGM: binary and plain, comments, maxval scaling, channel conversion", "[image]") {
  Image gray = decode_bytes(bytes_of(std::string("P5\n# a comment\n3 1\n255\n") + std::string("\x00\x80\xFF", 3)), 1);
  CHECK(gray.height == 1);
  CHECK(gray.width == 3);
  CHECK(gray.pixels == std::vector<uint8_t>{0, 128, 255});
  // Gray into RGB repeats the sample.
  CHECK(decode_bytes(bytes_of(std::string("P5 1 1 255 ") + "\x40"), 3).pixels == std::vector<uint8_t>{64, 64, 64});
  // RGB into gray: Pillow's luma.
  CHECK(decode_bytes(bytes_of(std::string("P6 1 1 255\n") + std::string("\xFF\x00\x00", 3)), 1).pixels ==
        std::vector<uint8_t>{76});
  // maxval 15 scales to 0..255; plain (text) samples.
  CHECK(decode_bytes(bytes_of("P2\n2 1\n15\n15 7\n"), 1).pixels == std::vector<uint8_t>{255, 119});
  CHECK(decode_bytes(bytes_of("P3 1 1 255 1 2 3"), 3).pixels == std::vector<uint8_t>{1, 2, 3});
  // 16-bit big-endian.
  CHECK(decode_bytes(bytes_of(std::string("P5 1 1 65535\n") + "\xFF\xFF"), 1).pixels == std::vector<uint8_t>{255});
}

TEST_CASE("damaged, empty and unknown files are BadImage naming the file", "[image]") {
  CHECK(bad_image_message([] { decode_bytes({}, 3); }).find("test.img: the file is empty") != std::string::npos);
  CHECK(bad_image_message([] { decode_bytes(bytes_of("GIF89a...."), 3); }).find("not an image of a supported format") !=
        std::string::npos);
  CHECK(bad_image_message([] { decode_bytes(bytes_of("P6 4 4 255\nabc"), 3); }).find("truncated") != std::string::npos);
  CHECK(bad_image_message([] { decode_bytes(bytes_of("P6 0 4 255\n"), 3); }).find("positive width") !=
        std::string::npos);
  CHECK(bad_image_message([] { decode_file("/nonexistent/x.png", 3); }).find("/nonexistent/x.png: cannot open") !=
        std::string::npos);
  // A FIFO named like an image: refused at once (opening it for reading would wait for a writer).
  TempDir temp("trainer-image-fifo");
  const std::string fifo = temp.path + "/waiting.png";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(bad_image_message([&] { decode_file(fifo, 3); }).find("not a regular file") != std::string::npos);
}

namespace {

uint32_t crc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string big_endian(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// A PNG signature, a valid IHDR chunk claiming width x height (8-bit RGB) and an empty IDAT chunk.
std::vector<uint8_t> png_header(uint32_t width, uint32_t height) {
  const std::string ihdr = "IHDR" + big_endian(width) + big_endian(height) + std::string("\x08\x02\0\0\0", 5);
  const std::string idat = "IDAT";  // empty: libpng reads the header up to the first IDAT
  return bytes_of(std::string("\x89PNG\r\n\x1A\n", 8) + big_endian(13) + ihdr + big_endian(crc32(ihdr)) +
                  big_endian(0) + idat + big_endian(crc32(idat)));
}

}  // namespace

TEST_CASE("a header claiming a gigantic image is refused before anything is allocated", "[image]") {
  CHECK(bad_image_message([] {
          decode_bytes(bytes_of("P5 60000 60000 255\n"), 1);
        }).find("claims 60000 x 60000 pixels, more than 178956970") != std::string::npos);
  CHECK(bad_image_message([] { decode_bytes(png_header(60000, 60000), 3); }).find("claims 60000 x 60000 pixels") !=
        std::string::npos);
  // A sane header with no data after it: truncated, not a bomb.
  CHECK(bad_image_message([] { decode_bytes(png_header(16, 16), 3); }).find("cannot decode this PNG file") !=
        std::string::npos);
}

TEST_CASE("every format decodes to Pillow's pixels, and damaged files are refused", "[image][python]") {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!python_has(python, "PIL")) {
    return trainer::testing::skip_test("Pillow comparison: no TRAINER_TEST_PYTHON with Pillow",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  TempDir temp("trainer-image-decoder");
  const std::string script = std::string(TRAINER_SOURCE_DIR) + "/tests/data/images/make_images.py";
  const std::string command =
      shell_quote(python) + " " + shell_quote(script) + " formats " + shell_quote(temp.path) + " 2>&1";
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream cases(temp.path + "/cases.txt");
  int good = 0, bad = 0;
  for (std::string name, kind; cases >> name >> kind;) {
    const std::string path = temp.path + "/" + name;
    INFO(name);
    if (kind == "bad") {
      const std::string message = bad_image_message([&] { decode_file(path, 3); });
      CHECK(message.rfind(path + ": ", 0) == 0);
      ++bad;
      continue;
    }
    for (int channels : {3, 1}) {
      const Image mine = decode_file(path, channels);
      const Image pillow = decode_file(path + (channels == 3 ? ".rgb.ppm" : ".l.pgm"), channels);
      INFO(channels << " channel(s): " << mine.height << "x" << mine.width << " against " << pillow.height << "x"
                    << pillow.width);
      REQUIRE(mine.height == pillow.height);
      REQUIRE(mine.width == pillow.width);
      REQUIRE(mine.channels == channels);
      size_t differ = 0;
      for (size_t i = 0; i < mine.pixels.size(); ++i) differ += mine.pixels[i] != pillow.pixels[i];
      CHECK(differ == 0);
    }
    ++good;
  }
  CHECK(good >= 20);
  CHECK(bad >= 10);
}

TEST_CASE("JPEG shrinks in the DCT domain only as far as the requested minimum allows", "[image][python]") {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!python_has(python, "PIL")) {
    return trainer::testing::skip_test("JPEG scaling: no TRAINER_TEST_PYTHON with Pillow",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  TempDir temp("trainer-image-decoder");
  const std::string script = "from PIL import Image\nImage.new('RGB', (200, 120), (90, 160, 30)).save('" + temp.path +
                             "/big.jpg', quality=95)\n";
  REQUIRE(std::system((shell_quote(python) + " -c " + shell_quote(script)).c_str()) == 0);
  std::vector<uint8_t> buffer;
  Image image;
  DecodeRequest request;
  request.min_height = 30;
  request.min_width = 50;  // 1/4 gives 50 x 30: allowed; 1/8 would be 25 x 15
  read_image(temp.path + "/big.jpg", request, buffer, image);
  CHECK(image.width == 50);
  CHECK(image.height == 30);
  request.min_width = 51;  // 1/4 no longer fits: 1/2
  read_image(temp.path + "/big.jpg", request, buffer, image);
  CHECK(image.width == 100);
  request.min_height = request.min_width = 0;  // no hint: full size
  read_image(temp.path + "/big.jpg", request, buffer, image);
  CHECK(image.width == 200);
  CHECK(image.height == 120);
}
