#include "trainer/image/image_transforms.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/image/image_resize.h"
#include "trainer/image/transform_pipeline.h"

#include "skip_test.h"
#include "temp_dir.h"
#include "test_process.h"

namespace fs = std::filesystem;
using trainer::testing::python_has;
using trainer::testing::shell_quote;
using trainer::testing::TempDir;
using trainer::testing::test_python;
using namespace trainer::image;
using trainer::SeededRandom;

namespace {

// A photograph-like test card: smooth gradients, a hard edge and seeded noise, so that resampling,
// rounding and clamping all show. Odd sizes on purpose.
Image test_card(int height, int width, int channels, uint64_t seed) {
  Image image;
  image.reshape(height, width, channels);
  SeededRandom random(seed);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        int v = (x * 255 / width + y * 97 / height + c * 60) % 256;
        if (x > width / 2 && y < height / 3) v = 255 - v;  // an edge
        v += static_cast<int>(random.below(41)) - 20;
        image.row(y)[x * channels + c] = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
      }
    }
  }
  return image;
}

void write_pnm(const Image& image, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << (image.channels == 3 ? "P6" : "P5") << "\n" << image.width << " " << image.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
}

Image read_pnm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  int width = 0, height = 0, max = 0;
  in >> magic >> width >> height >> max;
  in.get();  // the one whitespace byte before the samples
  Image image;
  image.reshape(height, width, magic == "P6" ? 3 : 1);
  in.read(reinterpret_cast<char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
  return image;
}

// How many bytes differ, for a readable failure.
size_t differing(const Image& a, const Image& b) {
  if (a.pixels.size() != b.pixels.size()) return SIZE_MAX;
  size_t n = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) n += a.pixels[i] != b.pixels[i];
  return n;
}

void check_same(const Image& mine, const Image& theirs, const std::string& name) {
  INFO(name << ": mine " << mine.height << "x" << mine.width << "x" << mine.channels << ", torchvision's "
            << theirs.height << "x" << theirs.width << "x" << theirs.channels);
  REQUIRE(mine.height == theirs.height);
  REQUIRE(mine.width == theirs.width);
  REQUIRE(mine.channels == theirs.channels);
  CHECK(differing(mine, theirs) == 0);
}

// Every case of torchvision_transforms.py, made with trainer's functions.
std::map<std::string, Image> ours(const Image& img) {
  std::map<std::string, Image> out;
  Image scratch, tmp;
  auto resized = [&](int h, int w) {
    Image r;
    resize_bilinear(img, h, w, r, scratch);
    return r;
  };
  out["resize_20x30"] = resized(20, 30);
  out["resize_80x100"] = resized(80, 100);
  out["resize_width_only"] = resized(img.height, 20);
  out["resize_height_only"] = resized(10, img.width);
  const Size shorter = shorter_side_resized(img.height, img.width, 24);
  out["resize_shorter_24"] = resized(shorter.height, shorter.width);
  center_crop(img, 20, 20, out["center_crop_20x20"], tmp);
  center_crop(img, img.height + 5, img.width + 8, out["center_crop_padded"], tmp);
  crop(img, CropBox{3, 5, 10, 12}, out["crop"]);
  SeededRandom unused(0);
  TransformScratch pipeline_scratch;
  out["preset_none_36"] = img;
  TransformPipeline::preset("none", true, 36, 36, "test").apply(out["preset_none_36"], unused, pipeline_scratch);
  out["preset_imagenet_eval_28"] = img;
  TransformPipeline::preset("imagenet", false, 28, 28, "test")
      .apply(out["preset_imagenet_eval_28"], unused, pipeline_scratch);
  out["hflip"] = img;
  horizontal_flip(out["hflip"]);
  // The factors as Python prints them in the file names.
  for (const auto& [text, factor] : {std::pair{"0.6", 0.6}, std::pair{"1.4", 1.4}}) {
    adjust_brightness(out[std::string("brightness_") + text] = img, factor);
  }
  for (const auto& [text, factor] : {std::pair{"0.5", 0.5}, std::pair{"1.7", 1.7}}) {
    adjust_contrast(out[std::string("contrast_") + text] = img, factor);
  }
  for (const auto& [text, factor] : {std::pair{"0.3", 0.3}, std::pair{"1.8", 1.8}}) {
    adjust_saturation(out[std::string("saturation_") + text] = img, factor);
  }
  return out;
}

void compare_with_torchvision(int channels) {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!python_has(python, "torchvision")) {
    return trainer::testing::skip_test("torchvision comparison: no TRAINER_TEST_PYTHON with torchvision",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  TempDir temp("trainer-image-transforms");
  const Image img = test_card(37, 53, channels, 5);
  const std::string ext = channels == 3 ? ".ppm" : ".pgm";
  write_pnm(img, temp.path + "/input" + ext);
  const std::string script = std::string(TRAINER_SOURCE_DIR) + "/tests/image/torchvision_transforms.py";
  const std::string command = shell_quote(python) + " " + shell_quote(script) + " " +
                              shell_quote(temp.path + "/input" + ext) + " " + shell_quote(temp.path) + " 2>&1";
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
  for (const auto& [name, image] : ours(img)) check_same(image, read_pnm(temp.path + "/" + name + ext), name);
  if (channels == 3) {
    Image gray;
    rgb_to_gray(img, gray);
    check_same(gray, read_pnm(temp.path + "/gray.pgm"), "gray");
  }
  const std::vector<float> mean =
      channels == 3 ? std::vector<float>{0.485f, 0.456f, 0.406f} : std::vector<float>{0.2860f};
  const std::vector<float> std =
      channels == 3 ? std::vector<float>{0.229f, 0.224f, 0.225f} : std::vector<float>{0.3530f};
  std::vector<float> mine(img.pixels.size());
  normalize_to_chw(img, mean.data(), std.data(), mine.data());
  std::ifstream in(temp.path + "/normalized.f32", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() == mine.size() * sizeof(float));
  CHECK(std::memcmp(bytes.data(), mine.data(), bytes.size()) == 0);
}

}  // namespace

TEST_CASE("resizing, crops, flips, colour and normalisation give torchvision's bytes (RGB)", "[image][python]") {
  compare_with_torchvision(3);
}

TEST_CASE("resizing, crops, flips, colour and normalisation give torchvision's bytes (gray)", "[image][python]") {
  compare_with_torchvision(1);
}

TEST_CASE("Resize(int) keeps the aspect ratio with the shorter side at the size", "[image]") {
  CHECK(shorter_side_resized(375, 500, 256).height == 256);
  CHECK(shorter_side_resized(375, 500, 256).width == 341);  // int(256 * 500 / 375) = int(341.33)
  CHECK(shorter_side_resized(500, 375, 256).height == 341);
  CHECK(shorter_side_resized(500, 375, 256).width == 256);
  CHECK(shorter_side_resized(28, 28, 64).height == 64);
}

TEST_CASE("resizing to the same size copies; a flat image stays flat at any size", "[image]") {
  Image flat;
  flat.reshape(7, 9, 3);
  std::fill(flat.pixels.begin(), flat.pixels.end(), uint8_t{200});
  Image out, scratch;
  resize_bilinear(flat, 7, 9, out, scratch);
  CHECK(out.pixels == flat.pixels);
  for (auto [h, w] : {std::pair{3, 4}, std::pair{20, 31}, std::pair{1, 1}, std::pair{7, 2}}) {
    resize_bilinear(flat, h, w, out, scratch);
    CHECK(out.height == h);
    CHECK(out.width == w);
    CHECK(std::all_of(out.pixels.begin(), out.pixels.end(), [](uint8_t v) { return v == 200; }));
  }
}

TEST_CASE("random resized crops stay inside the image and follow the scale and ratio", "[image]") {
  SeededRandom random(3);
  for (int i = 0; i < 2000; ++i) {
    const CropBox box = random_resized_crop_box(120, 90, 0.08, 1.0, 3.0 / 4, 4.0 / 3, random);
    REQUIRE(box.height >= 1);
    REQUIRE(box.width >= 1);
    REQUIRE(box.top >= 0);
    REQUIRE(box.left >= 0);
    REQUIRE(box.top + box.height <= 120);
    REQUIRE(box.left + box.width <= 90);
  }
  // A scale no crop can satisfy falls back to the whole image, cut to the allowed ratio.
  SeededRandom again(3);
  const CropBox box = random_resized_crop_box(100, 10, 1.0, 1.0, 3.0 / 4, 4.0 / 3, again);
  CHECK(box.width == 10);
  CHECK(box.height == 13);  // round(10 / 0.75)
  CHECK(box.top == 43);
  CHECK(box.left == 0);
  // The same seed draws the same boxes.
  SeededRandom a(9), b(9);
  const CropBox first = random_resized_crop_box(64, 64, 0.08, 1.0, 0.75, 4.0 / 3, a);
  const CropBox second = random_resized_crop_box(64, 64, 0.08, 1.0, 0.75, 4.0 / 3, b);
  CHECK(first.top == second.top);
  CHECK(first.left == second.left);
  CHECK(first.height == second.height);
  CHECK(first.width == second.width);
}

TEST_CASE("gray and RGB convert both ways; padding is black", "[image]") {
  Image rgb;
  rgb.reshape(1, 2, 3);
  rgb.pixels = {255, 0, 0, 10, 200, 30};
  Image gray, back;
  rgb_to_gray(rgb, gray);
  CHECK(gray.pixels == std::vector<uint8_t>{76, 124});  // (255*19595 + 0x8000) >> 16 = 76
  gray_to_rgb(gray, back);
  CHECK(back.pixels == std::vector<uint8_t>{76, 76, 76, 124, 124, 124});
  Image padded;
  pad(gray, 1, 2, 0, 1, padded);
  CHECK(padded.height == 4);
  CHECK(padded.width == 3);
  CHECK(padded.pixels == std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 76, 124, 0, 0, 0});
}
