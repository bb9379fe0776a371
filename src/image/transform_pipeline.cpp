#include "trainer/image/transform_pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "trainer/image/image_transforms.h"
#include "trainer/util/error.h"

namespace trainer::image {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

std::string size_text(int height, int width) {
  return "(" + std::to_string(height) + ", " + std::to_string(width) + ")";
}

void check(bool ok, const std::string& where, const TransformStep& step, const std::string& problem) {
  if (!ok) throw Error(where, step.describe() + ": " + problem);
}

// A factor in [max(0, 1 - x), 1 + x], as ColorJitter draws it.
double jitter_factor(double x, SeededRandom& random) { return random.uniform(std::max(0.0, 1.0 - x), 1.0 + x); }

}  // namespace

std::string TransformStep::describe() const {
  switch (kind) {
    case Kind::kResize:
      return width == 0 ? "Resize(size=" + std::to_string(height) + ")"
                        : "Resize(size=" + size_text(height, width) + ")";
    case Kind::kCenterCrop:
      return "CenterCrop(size=" + size_text(height, width) + ")";
    case Kind::kRandomResizedCrop:
      return "RandomResizedCrop(size=" + size_text(height, width) + ", scale=(" + number(scale_min) + ", " +
             number(scale_max) + "), ratio=(" + number(ratio_min) + ", " + number(ratio_max) + "))";
    case Kind::kRandomCrop:
      return "RandomCrop(size=" + size_text(height, width) + ", padding=" + std::to_string(padding) + ")";
    case Kind::kHorizontalFlip:
      return "RandomHorizontalFlip(p=" + number(probability) + ")";
    case Kind::kColorJitter:
      return "ColorJitter(brightness=" + number(brightness) + ", contrast=" + number(contrast) +
             ", saturation=" + number(saturation) + ")";
  }
  return "?";
}

TransformPipeline::TransformPipeline(std::vector<TransformStep> steps, const std::string& where)
    : steps_(std::move(steps)), where_(where) {
  for (const TransformStep& s : steps_) {
    using Kind = TransformStep::Kind;
    switch (s.kind) {
      case Kind::kResize:
        check(s.height >= 1 && s.width >= 0, where, s, "the size must be positive");
        break;
      case Kind::kCenterCrop:
      case Kind::kRandomCrop:
      case Kind::kRandomResizedCrop:
        check(s.height >= 1 && s.width >= 1, where, s, "the size must be positive");
        check(s.padding >= 0, where, s, "the padding must be 0 or more");
        check(s.scale_min > 0 && s.scale_min <= s.scale_max, where, s, "scale must be (min, max) with 0 < min <= max");
        check(s.ratio_min > 0 && s.ratio_min <= s.ratio_max, where, s, "ratio must be (min, max) with 0 < min <= max");
        break;
      case Kind::kHorizontalFlip:
        check(s.probability >= 0 && s.probability <= 1, where, s, "p must be in [0, 1]");
        break;
      case Kind::kColorJitter:
        check(s.brightness >= 0 && s.contrast >= 0 && s.saturation >= 0, where, s,
              "brightness, contrast and saturation must be 0 or more");
        break;
    }
  }
}

TransformPipeline TransformPipeline::preset(const std::string& name, bool training, int height, int width,
                                            const std::string& where) {
  using Kind = TransformStep::Kind;
  std::vector<TransformStep> steps;
  auto step = [&](Kind kind, int h, int w) {
    TransformStep s;
    s.kind = kind;
    s.height = h;
    s.width = w;
    steps.push_back(s);
  };
  if (height != width) {
    throw Error(where,
                "the " + name + " preset crops squares, and " + std::to_string(height) + " x " + std::to_string(width) +
                    " is not one",
                "Use one size (data.image_size=" + std::to_string(std::max(height, width)) + ").");
  }
  if (name == "none") {
    if (height > 0) {
      step(Kind::kResize, std::min(height, width), 0);
      step(Kind::kCenterCrop, height, width);
    }
  } else if (name == "imagenet") {
    if (height <= 0) {
      throw Error(where, "augment=imagenet needs the size the images are brought to",
                  "Set data.image_size (for example 224, or 64 for small images).");
    }
    if (training) {
      step(Kind::kRandomResizedCrop, height, width);
      step(Kind::kHorizontalFlip, 0, 0);
    } else {
      // torchvision's reference recipes: resize 256, crop 224; the same 8/7 for other sizes.
      step(Kind::kResize, static_cast<int>(std::lround(std::min(height, width) * 8.0 / 7.0)), 0);
      step(Kind::kCenterCrop, height, width);
    }
  } else {
    throw Error(where, "unknown augmentation preset '" + name + "'", "Use data.augment=none or data.augment=imagenet.");
  }
  return TransformPipeline(std::move(steps), where);
}

void TransformPipeline::apply(Image& image, SeededRandom& random, TransformScratch& scratch, size_t first_step) const {
  using Kind = TransformStep::Kind;
  for (size_t i = first_step; i < steps_.size(); ++i) {
    const TransformStep& s = steps_[i];
    switch (s.kind) {
      case Kind::kResize: {
        const Size size =
            s.width == 0 ? shorter_side_resized(image.height, image.width, s.height) : Size{s.height, s.width};
        if (size.height == image.height && size.width == image.width) break;  // Pillow returns a copy
        resize_bilinear(image, size.height, size.width, scratch.a, scratch.b);
        std::swap(image, scratch.a);
        break;
      }
      case Kind::kCenterCrop:
        if (s.height == image.height && s.width == image.width) break;  // the whole image
        center_crop(image, s.height, s.width, scratch.a, scratch.b);
        std::swap(image, scratch.a);
        break;
      case Kind::kRandomResizedCrop: {
        const CropBox box = random_resized_crop_box(image.height, image.width, s.scale_min, s.scale_max, s.ratio_min,
                                                    s.ratio_max, random);
        crop(image, box, scratch.b);
        resize_bilinear(scratch.b, s.height, s.width, image, scratch.a);
        break;
      }
      case Kind::kRandomCrop: {
        const Image* source = &image;
        if (s.padding > 0) {
          pad(image, s.padding, s.padding, s.padding, s.padding, scratch.b);
          source = &scratch.b;
        }
        if (source->height < s.height || source->width < s.width) {
          throw Error("data.transforms",
                      s.describe() + ": the image is " + std::to_string(source->height) + " x " +
                          std::to_string(source->width) + " (after padding), smaller than the crop",
                      "Resize before cropping, or crop less.");
        }
        CropBox box;
        const int rows = source->height - s.height + 1, columns = source->width - s.width + 1;
        box.top = static_cast<int>(random.below(static_cast<uint64_t>(rows)));
        box.left = static_cast<int>(random.below(static_cast<uint64_t>(columns)));
        box.height = s.height;
        box.width = s.width;
        crop(*source, box, scratch.a);
        std::swap(image, scratch.a);
        break;
      }
      case Kind::kHorizontalFlip:
        if (random.uniform() < s.probability) horizontal_flip(image);
        break;
      case Kind::kColorJitter: {
        // As ColorJitter: a random order of the three adjustments, then the three factors.
        int order[3] = {0, 1, 2};
        for (int i = 2; i > 0; --i) std::swap(order[i], order[random.below(static_cast<uint64_t>(i) + 1)]);
        const double factors[3] = {s.brightness > 0 ? jitter_factor(s.brightness, random) : 1.0,
                                   s.contrast > 0 ? jitter_factor(s.contrast, random) : 1.0,
                                   s.saturation > 0 ? jitter_factor(s.saturation, random) : 1.0};
        for (int which : order) {
          if (which == 0 && s.brightness > 0) adjust_brightness(image, factors[0]);
          if (which == 1 && s.contrast > 0) adjust_contrast(image, factors[1]);
          if (which == 2 && s.saturation > 0) adjust_saturation(image, factors[2]);
        }
        break;
      }
    }
  }
}

std::optional<Size> TransformPipeline::output_size() const {
  using Kind = TransformStep::Kind;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    switch (it->kind) {
      case Kind::kCenterCrop:
      case Kind::kRandomResizedCrop:
      case Kind::kRandomCrop:
        return Size{it->height, it->width};
      case Kind::kResize:
        if (it->width > 0) return Size{it->height, it->width};
        return std::nullopt;  // the shorter side only: the other follows each image
      case Kind::kHorizontalFlip:
      case Kind::kColorJitter:
        break;  // keep the size
    }
  }
  return std::nullopt;
}

bool TransformPipeline::random() const {
  return std::any_of(steps_.begin(), steps_.end(), [](const TransformStep& s) {
    return s.kind == TransformStep::Kind::kRandomResizedCrop || s.kind == TransformStep::Kind::kRandomCrop ||
           s.kind == TransformStep::Kind::kHorizontalFlip || s.kind == TransformStep::Kind::kColorJitter;
  });
}

std::string TransformPipeline::describe() const {
  if (steps_.empty()) return "none";
  std::string text;
  for (const TransformStep& s : steps_) text += (text.empty() ? "" : " -> ") + s.describe();
  return text;
}

}  // namespace trainer::image
