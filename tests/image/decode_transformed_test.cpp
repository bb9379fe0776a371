// A JPEG's random_resized_crop decoded as a region (image_decoder.h's DecodeRequest::region,
// decode_transformed.h): unshrunk, the pixels of a full decode cropped; shrunk, the box's size
// halved as far as it stays at least the output; the same boxes drawn, the same draws left for the
// steps after it; damage outside the box still found. The JPEG files are Pillow's.
#include "trainer/image/decode_transformed.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/image/image_resize.h"
#include "trainer/image/image_transforms.h"

#include "skip_test.h"
#include "temp_dir.h"
#include "test_process.h"

using trainer::SeededRandom;
using trainer::testing::python_has;
using trainer::testing::shell_quote;
using trainer::testing::TempDir;
using trainer::testing::test_python;
using namespace trainer::image;

namespace {

// Writes JPEG files with Pillow into `dir`: noise (every pixel its own, so any misplaced row or
// column shows) in 4:2:0 (Pillow's default), 4:4:4 and gray, and a smooth gradient; sizes not a
// multiple of the 16-pixel iMCU.
bool make_jpegs(const std::string& dir) {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!python_has(python, "PIL")) return false;
  const std::string script =
      "import random\n"
      "from PIL import Image\n"
      "random.seed(7)\n"
      "def noise(w, h, mode):\n"
      "    n = 3 if mode == 'RGB' else 1\n"
      "    return Image.frombytes(mode, (w, h), bytes(random.randrange(256) for _ in range(w * h * n)))\n"
      "noise(203, 157, 'RGB').save('" +
      dir +
      "/noise420.jpg', quality=90)\n"
      "noise(203, 157, 'RGB').save('" +
      dir +
      "/noise444.jpg', quality=90, subsampling=0)\n"
      "noise(203, 157, 'L').save('" +
      dir +
      "/gray.jpg', quality=90)\n"
      "g = Image.new('RGB', (413, 397))\n"
      "g.putdata([(x * 255 // 412, y * 255 // 396, (x + y) * 255 // 809) for y in range(397) for x in range(413)])\n"
      "g.save('" +
      dir +
      "/smooth.jpg', quality=95)\n"
      "small = noise(90, 84, 'RGB')\n"
      "small.save('" +
      dir +
      "/small.jpg', quality=90)\n"
      "data = open('" +
      dir +
      "/smooth.jpg', 'rb').read()\n"
      "open('" +
      dir + "/truncated.jpg', 'wb').write(data[:len(data) * 2 // 3])\n";
  return std::system((shell_quote(python) + " -c " + shell_quote(script)).c_str()) == 0;
}

// The files made, or the test marked skipped (no Python with Pillow) and false.
bool jpegs_made(const std::string& dir) {
  if (make_jpegs(dir)) return true;
  trainer::testing::skip_test("JPEG regions: no TRAINER_TEST_PYTHON with Pillow",
                              trainer::testing::Skip::unexpected_in_ci);
  return false;
}

std::vector<uint8_t> bytes_of(const std::string& path) {
  std::vector<uint8_t> bytes;
  read_file(path, bytes);
  return bytes;
}

Image decode(const std::vector<uint8_t>& bytes, const DecodeRequest& request) {
  Image image;
  decode_image(bytes.data(), bytes.size(), request, image, "test.jpg");
  return image;
}

size_t differing_bytes(const Image& a, const Image& b) {
  REQUIRE(a.pixels.size() == b.pixels.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) differ += a.pixels[i] != b.pixels[i];
  return differ;
}

double mean_difference(const Image& a, const Image& b) {
  REQUIRE(a.pixels.size() == b.pixels.size());
  double total = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) total += std::abs(int{a.pixels[i]} - int{b.pixels[i]});
  return total / static_cast<double>(a.pixels.size());
}

TransformPipeline crop_then_flip(int size) {
  TransformStep crop;
  crop.kind = TransformStep::Kind::kRandomResizedCrop;
  crop.height = crop.width = size;
  TransformStep flip;
  flip.kind = TransformStep::Kind::kHorizontalFlip;
  return TransformPipeline({crop, flip}, "test");
}

// What decode_transformed replaces: the whole image decoded, then every step.
Image full_then_steps(const std::vector<uint8_t>& bytes, const TransformPipeline& steps, SeededRandom& random) {
  Image image = decode(bytes, DecodeRequest{});
  TransformScratch scratch;
  steps.apply(image, random, scratch);
  return image;
}

}  // namespace

TEST_CASE("a JPEG region at full scale is the full decode cropped, bit for bit", "[image][python]") {
  TempDir dir("trainer-region");
  if (!jpegs_made(dir.path)) return;
  for (const std::string name : {"noise420", "noise444", "gray"}) {
    const std::vector<uint8_t> bytes = bytes_of(dir.path + "/" + name + ".jpg");
    for (int channels : {3, 1}) {
      DecodeRequest whole;
      whole.channels = channels;
      const Image full = decode(bytes, whole);
      REQUIRE(full.height == 157);
      REQUIRE(full.width == 203);
      // Odd offsets and sizes, the image's edges, one row and one column, and boxes whose sides lie
      // on the 16-pixel iMCU boundaries, where libjpeg's cropped decode starts and ends.
      for (const CropBox box :
           {CropBox{7, 13, 50, 70}, CropBox{0, 0, 157, 203}, CropBox{100, 150, 57, 53}, CropBox{33, 1, 1, 202},
            CropBox{0, 202, 157, 1}, CropBox{16, 16, 64, 64}, CropBox{32, 48, 40, 32}, CropBox{5, 16, 90, 176}}) {
        INFO(name << ", " << channels << " channel(s), box " << box.top << "," << box.left << " " << box.height << "x"
                  << box.width);
        DecodeRequest request = whole;
        request.region = box;
        const Image region = decode(bytes, request);
        Image expected;
        crop(full, box, expected);
        REQUIRE(region.height == box.height);
        REQUIRE(region.width == box.width);
        REQUIRE(region.channels == channels);
        CHECK(differing_bytes(region, expected) == 0);
      }
    }
  }
}

TEST_CASE("a JPEG region shrinks in the DCT domain only as far as the minimum allows", "[image][python]") {
  TempDir dir("trainer-region");
  if (!jpegs_made(dir.path)) return;
  const std::vector<uint8_t> bytes = bytes_of(dir.path + "/smooth.jpg");
  const Image full = decode(bytes, DecodeRequest{});
  const CropBox box{41, 37, 300, 333};
  DecodeRequest request;
  request.region = box;
  request.min_height = request.min_width = 64;  // 300 / 4 = 75 and 333 / 4 = 83 fit; / 8 would not
  const Image shrunk = decode(bytes, request);
  CHECK(shrunk.height == 75);
  CHECK(shrunk.width == 83);
  request.min_width = 84;  // 1/4 no longer fits: 1/2
  CHECK(decode(bytes, request).width == 166);
  // The same picture: the box decoded at 1/4 against the full decode's box resized to that size.
  Image cropped, resized, scratch;
  crop(full, CropBox{40, 36, 300, 332}, cropped);  // the box rounded to the shrunk pixels
  resize_bilinear(cropped, 75, 83, resized, scratch);
  CHECK(mean_difference(shrunk, resized) < 1.5);
}

TEST_CASE("damage outside the region is still found; a region outside the image is refused", "[image][python]") {
  TempDir dir("trainer-region");
  if (!jpegs_made(dir.path)) return;
  const std::vector<uint8_t> truncated = bytes_of(dir.path + "/truncated.jpg");
  DecodeRequest request;
  request.region = CropBox{0, 0, 40, 40};  // rows the truncated file still holds
  CHECK_THROWS_AS(decode(truncated, request), BadImage);
  const std::vector<uint8_t> bytes = bytes_of(dir.path + "/gray.jpg");
  request.region = CropBox{100, 150, 58, 53};  // one row too many
  CHECK_THROWS_AS(decode(bytes, request), std::logic_error);
}

TEST_CASE("decode_transformed draws the same boxes and leaves the same draws for the later steps", "[image][python]") {
  TempDir dir("trainer-region");
  if (!jpegs_made(dir.path)) return;
  TransformScratch scratch;
  SECTION("boxes under twice the output are decoded unshrunk: torchvision's bytes, as before") {
    const std::vector<uint8_t> bytes = bytes_of(dir.path + "/small.jpg");  // 90 x 84, output 64
    const TransformPipeline steps = crop_then_flip(64);
    for (uint64_t seed = 0; seed < 40; ++seed) {
      SeededRandom a(seed), b(seed);
      Image mine;
      decode_transformed(bytes.data(), bytes.size(), DecodeRequest{}, steps, a, scratch, mine, "small.jpg");
      const Image before = full_then_steps(bytes, steps, b);
      INFO("seed " << seed);
      CHECK(differing_bytes(mine, before) == 0);
      CHECK(a.below(1u << 30) == b.below(1u << 30));  // the generator where the old path left it
    }
  }
  SECTION("larger boxes are shrunk first: the same size and draws, nearly the same pixels") {
    const std::vector<uint8_t> bytes = bytes_of(dir.path + "/smooth.jpg");  // 413 x 397, output 32
    const TransformPipeline steps = crop_then_flip(32);
    double worst = 0;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      SeededRandom a(seed), b(seed);
      Image mine;
      decode_transformed(bytes.data(), bytes.size(), DecodeRequest{}, steps, a, scratch, mine, "smooth.jpg");
      const Image before = full_then_steps(bytes, steps, b);
      REQUIRE(mine.height == 32);
      REQUIRE(mine.width == 32);
      worst = std::max(worst, mean_difference(mine, before));
      CHECK(a.below(1u << 30) == b.below(1u << 30));
    }
    INFO("largest mean difference " << worst);
    CHECK(worst < 6.0);  // the box's edge moves by under d pixels of the stored image
  }
}
