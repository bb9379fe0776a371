// data.transforms' lists: torchvision's names (snake case or its class names), a bare value for
// the first parameter, the parameters and their defaults as torchvision has them, a final
// normalize, and each mistake named by its item.
#include "trainer/data/transform_config.h"

#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using trainer::data::parse_transform_list;
using trainer::data::TransformList;
using Kind = trainer::image::TransformStep::Kind;
using Catch::Contains;

namespace {

TransformList parse(const std::string& text) {
  const trainer::config::Node root = trainer::config::load_yaml_string("v: " + text, "test").root;
  return parse_transform_list(*root.find("v"), "data.transforms.train");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("each transform by torchvision's name, with its parameters and defaults") {
  const TransformList list = parse(
      "[{resize: 72}, {center_crop: [64, 48]}, {random_resized_crop: {size: 32, scale: [0.5, 1.0], ratio: [1, 2]}},"
      " {random_crop: {size: 28, padding: 4}}, horizontal_flip, {color_jitter: {brightness: 0.4, saturation: 0.2}},"
      " {normalize: {mean: [0.5, 0.4, 0.3], std: 0.25}}]");
  REQUIRE(list.steps.size() == 6);
  CHECK(list.steps[0].kind == Kind::kResize);
  CHECK(list.steps[0].height == 72);
  CHECK(list.steps[0].width == 0);  // an int: the shorter side, as torchvision's Resize(72)
  CHECK(list.steps[1].kind == Kind::kCenterCrop);
  CHECK(list.steps[1].height == 64);
  CHECK(list.steps[1].width == 48);
  CHECK(list.steps[2].kind == Kind::kRandomResizedCrop);
  CHECK(list.steps[2].height == 32);
  CHECK(list.steps[2].width == 32);  // an int: a square crop
  CHECK(list.steps[2].scale_min == 0.5);
  CHECK(list.steps[2].ratio_max == 2.0);
  CHECK(list.steps[3].kind == Kind::kRandomCrop);
  CHECK(list.steps[3].padding == 4);
  CHECK(list.steps[4].kind == Kind::kHorizontalFlip);
  CHECK(list.steps[4].probability == 0.5);
  CHECK(list.steps[5].kind == Kind::kColorJitter);
  CHECK(list.steps[5].brightness == 0.4);
  CHECK(list.steps[5].contrast == 0.0);
  CHECK(list.steps[5].saturation == 0.2);
  REQUIRE(list.mean.has_value());
  CHECK(*list.mean == std::vector<double>{0.5, 0.4, 0.3});
  CHECK(*list.std == std::vector<double>{0.25});
}

TEST_CASE("torchvision's class names, and a bare value for the first parameter") {
  const TransformList list = parse(
      "[{Resize: [40, 30]}, {RandomResizedCrop: 24}, {RandomHorizontalFlip: 0.25}, {ColorJitter: 0.3}, "
      "{CenterCrop: [24]}, {RandomCrop: 20}, {Normalize: {mean: 0.5, std: 0.2}}]");
  REQUIRE(list.steps.size() == 6);
  CHECK(list.steps[0].kind == Kind::kResize);
  CHECK(list.steps[0].height == 40);
  CHECK(list.steps[0].width == 30);  // [h, w]: exactly that size
  CHECK(list.steps[1].kind == Kind::kRandomResizedCrop);
  CHECK(list.steps[1].scale_min == 0.08);  // torchvision's defaults
  CHECK(list.steps[1].ratio_min == Approx(0.75));
  CHECK(list.steps[1].ratio_max == Approx(4.0 / 3.0));
  CHECK(list.steps[2].probability == 0.25);
  CHECK(list.steps[3].brightness == 0.3);  // ColorJitter(0.3): brightness, as torchvision's first argument
  CHECK(list.steps[3].contrast == 0.0);
  CHECK(list.steps[4].height == 24);  // [s]: as s
  CHECK(list.steps[4].width == 24);
  CHECK(list.steps[5].kind == Kind::kRandomCrop);
  CHECK(list.steps[5].padding == 0);
  CHECK(*list.mean == std::vector<double>{0.5});
  CHECK(trainer::data::transform_names().size() == 7);
}

TEST_CASE("mistakes name the item and the fix") {
  CHECK_THAT(error_of("[{resize: 72}, {random_flip: 0.5}]"),
             Contains("data.transforms.train, item 1 (random_flip): unknown transform 'random_flip'"));
  CHECK_THAT(error_of("[{RandomHorizontalFlp: 0.5}]"), Contains("did you mean 'RandomHorizontalFlip'?"));
  CHECK_THAT(error_of("[ToTensor]"), Contains("the loader makes float tensors itself"));
  CHECK_THAT(error_of("[{center_crop: {sise: 3}}]"),
             Contains("center_crop has no parameter 'sise'; did you mean 'size'?"));
  CHECK_THAT(error_of("[{color_jitter: {hue: 0.1}}]"), Contains("hue is not supported"));
  CHECK_THAT(error_of("[center_crop]"), Contains("item 0 (center_crop): needs its size"));
  CHECK_THAT(error_of("[{resize: 0}]"), Contains("a side is a positive int"));
  CHECK_THAT(error_of("[{resize: [1, 2, 3]}]"), Contains("one side, or [height, width]"));
  CHECK_THAT(error_of("[{random_crop: {size: 8, padding: [1, 2]}}]"), Contains("padding is [1, 2]: one int"));
  CHECK_THAT(error_of("[{horizontal_flip: 2}]"), Contains("p is 2, outside [0.0, 1.0]"));
  CHECK_THAT(error_of("[{color_jitter: -0.5}]"), Contains("brightness is -0.5, outside [0.0, inf]"));
  CHECK_THAT(error_of("[{random_resized_crop: {size: 8, scale: 0.5}}]"), Contains("scale is 0.5: expected [min, max]"));
  CHECK_THAT(error_of("[{random_resized_crop: {size: 8, scale: [0.9, 0.1]}}]"),
             Contains("scale must be (min, max) with 0 < min <= max"));
  CHECK_THAT(error_of("[{normalize: {mean: [0.5], std: [0.5]}}, horizontal_flip]"),
             Contains("item 1 (horizontal_flip): normalize must be the last step"));
  CHECK_THAT(error_of("[{normalize: {mean: [0.5], std: [0]}}]"), Contains("std must be positive"));
  CHECK_THAT(error_of("[{normalize: {mean: [0.5]}}]"), Contains("needs std"));
  CHECK_THAT(error_of("[{resize: 72, center_crop: 64}]"), Contains("item 0 is {'resize': 72, 'center_crop': 64}"));
  CHECK_THAT(error_of("{resize: 72}"), Contains("expected a list of steps"));
  CHECK(error_of("[]").empty());
}
