// A list of per-sample image transforms, applied in order as torchvision's Compose applies them:
// what data.transforms (or a data.augment preset) becomes once read from the config. Random steps
// draw from the SeededRandom the caller seeds per sample, so an image's augmentation depends only
// on (seed, epoch, sample), never on the thread that makes it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/image/image.h"
#include "trainer/image/image_resize.h"
#include "trainer/util/seeded_random.h"

namespace trainer::image {

struct TransformStep {
  enum class Kind { kResize, kCenterCrop, kRandomResizedCrop, kRandomCrop, kHorizontalFlip, kColorJitter };
  Kind kind = Kind::kResize;
  // resize: [height, width], or the shorter side when width is 0; the crops: the output size.
  int height = 0;
  int width = 0;
  double scale_min = 0.08, scale_max = 1.0;             // random_resized_crop: area fraction
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // random_resized_crop: aspect ratio
  int padding = 0;                                      // random_crop: black border first
  double probability = 0.5;                             // horizontal_flip
  double brightness = 0, contrast = 0, saturation = 0;  // color_jitter: factor in [1 - x, 1 + x]

  // The step as torchvision would be told it, e.g. "RandomResizedCrop(size=(64, 64), scale=(0.08,
  // 1.0), ratio=(0.75, 1.3333))", for logs and errors.
  std::string describe() const;
};

// Scratch images reused from sample to sample (one per loader thread).
struct TransformScratch {
  Image a, b;
};

class TransformPipeline {
 public:
  TransformPipeline() = default;
  // Throws trainer::Error (at `where`) for a step whose parameters torchvision would refuse.
  TransformPipeline(std::vector<TransformStep> steps, const std::string& where);

  // The presets of data.augment, for images brought to height x width:
  //   "none":     training and evaluation: resize the shorter side to the size, center crop
  //   "imagenet": training: random_resized_crop + horizontal_flip; evaluation: resize the shorter
  //               side to 8/7 of the size (256 for 224, as torchvision's reference recipes) and
  //               center crop
  // With height 0 (no size given), "none" is empty: the images must already share one size. The
  // sizes must be square (height == width): a shorter-side resize and a non-square crop would add
  // black bars at evaluation that training never shows.
  static TransformPipeline preset(const std::string& name, bool training, int height, int width,
                                  const std::string& where);

  // Applies the steps from `first_step` on to `image`, in order.
  void apply(Image& image, SeededRandom& random, TransformScratch& scratch, size_t first_step = 0) const;

  // The size every output has when the last resizing step fixes it; nullopt otherwise.
  std::optional<Size> output_size() const;
  bool random() const;  // whether any step draws
  bool empty() const { return steps_.empty(); }
  const std::vector<TransformStep>& steps() const { return steps_; }
  std::string describe() const;  // "Resize(...) -> CenterCrop(...)", or "none"

 private:
  std::vector<TransformStep> steps_;
  std::string where_;  // the config key the steps came from, for errors while applying them
};

}  // namespace trainer::image
