#include "trainer/image/transform_pipeline.h"

#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using namespace trainer::image;
using trainer::SeededRandom;
using Kind = TransformStep::Kind;

namespace {

Image noise(int height, int width, int channels, uint64_t seed) {
  Image image;
  image.reshape(height, width, channels);
  SeededRandom random(seed);
  for (auto& v : image.pixels) v = static_cast<uint8_t>(random.below(256));
  return image;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TransformStep step(Kind kind, int height = 0, int width = 0) {
  TransformStep s;
  s.kind = kind;
  s.height = height;
  s.width = width;
  return s;
}

}  // namespace

TEST_CASE("the presets are torchvision's recipes", "[image]") {
  CHECK(TransformPipeline::preset("none", true, 0, 0, "data.augment").empty());
  CHECK(TransformPipeline::preset("none", true, 64, 64, "data.augment").describe() ==
        "Resize(size=64) -> CenterCrop(size=(64, 64))");
  CHECK(TransformPipeline::preset("imagenet", true, 224, 224, "data.augment").describe() ==
        "RandomResizedCrop(size=(224, 224), scale=(0.08, 1), ratio=(0.75, 1.333)) -> RandomHorizontalFlip(p=0.5)");
  CHECK(TransformPipeline::preset("imagenet", false, 224, 224, "data.augment").describe() ==
        "Resize(size=256) -> CenterCrop(size=(224, 224))");
  CHECK(TransformPipeline::preset("imagenet", true, 48, 48, "data.augment").output_size()->width == 48);
  CHECK_FALSE(TransformPipeline::preset("none", false, 0, 0, "data.augment").random());
  CHECK(TransformPipeline::preset("imagenet", true, 64, 64, "data.augment").random());
}

TEST_CASE("every image leaves a sized pipeline at its size, whatever it came in as", "[image]") {
  const auto train = TransformPipeline::preset("imagenet", true, 24, 24, "data.augment");
  const auto eval = TransformPipeline::preset("imagenet", false, 24, 24, "data.augment");
  TransformScratch scratch;
  SeededRandom random(1);
  for (auto [h, w, c] : {std::tuple{28, 28, 1}, std::tuple{375, 500, 3}, std::tuple{20, 90, 3}, std::tuple{7, 5, 1}}) {
    for (const auto* pipeline : {&train, &eval}) {
      Image image = noise(h, w, c, 2);
      pipeline->apply(image, random, scratch);
      CHECK(image.height == 24);
      CHECK(image.width == 24);
      CHECK(image.channels == c);
    }
  }
}

TEST_CASE("random steps depend only on the generator's seed", "[image]") {
  TransformStep jitter = step(Kind::kColorJitter);
  jitter.brightness = 0.4;
  jitter.contrast = 0.4;
  jitter.saturation = 0.4;
  TransformStep crop = step(Kind::kRandomCrop, 20, 20);
  crop.padding = 4;
  const TransformPipeline pipeline({step(Kind::kRandomResizedCrop, 24, 24), crop, step(Kind::kHorizontalFlip), jitter},
                                   "data.transforms");
  const Image source = noise(40, 50, 3, 3);
  auto run = [&](uint64_t seed) {
    Image image = source;
    SeededRandom random(seed);
    TransformScratch scratch;
    pipeline.apply(image, random, scratch);
    return image.pixels;
  };
  CHECK(run(7) == run(7));
  CHECK(run(7) != run(8));
}

TEST_CASE("steps torchvision would refuse are errors naming the step", "[image]") {
  CHECK(error_of([] {
          TransformPipeline::preset("fancy", true, 64, 64, "data.augment");
        }).find("data.augment: unknown augmentation preset 'fancy'") != std::string::npos);
  CHECK(error_of([] { TransformPipeline::preset("imagenet", true, 0, 0, "data.augment"); }).find("data.image_size") !=
        std::string::npos);
  CHECK(error_of([] {
          TransformPipeline::preset("none", true, 64, 48, "data.augment");
        }).find("the none preset crops squares, and 64 x 48 is not one") != std::string::npos);
  TransformStep bad_scale = step(Kind::kRandomResizedCrop, 8, 8);
  bad_scale.scale_min = 0.9;
  bad_scale.scale_max = 0.1;
  CHECK(error_of([&] {
          TransformPipeline({bad_scale}, "data.transforms.train");
        }).find("data.transforms.train: RandomResizedCrop(size=(8, 8), scale=(0.9, 0.1)") != std::string::npos);
  CHECK(error_of([] { TransformPipeline({step(Kind::kCenterCrop, 0, 4)}, "t"); }).find("positive") !=
        std::string::npos);
  // A crop larger than the (padded) image: an error when it happens, naming the step.
  const TransformPipeline crop({step(Kind::kRandomCrop, 30, 30)}, "data.transforms");
  Image small = noise(10, 10, 1, 4);
  SeededRandom random(1);
  TransformScratch scratch;
  CHECK(error_of([&] { crop.apply(small, random, scratch); }).find("smaller than the crop") != std::string::npos);
}

TEST_CASE("an image already at the preset's size passes through unchanged", "[image]") {
  const auto none = TransformPipeline::preset("none", false, 24, 24, "data.augment");
  const Image source = noise(24, 24, 3, 5);
  Image image = source;
  SeededRandom random(1);
  TransformScratch scratch;
  none.apply(image, random, scratch);
  CHECK(image.pixels == source.pixels);
  // The shorter side already at the size: no resize, only the crop.
  Image wide = noise(24, 40, 1, 6);
  none.apply(wide, random, scratch);
  CHECK(wide.height == 24);
  CHECK(wide.width == 24);
}
