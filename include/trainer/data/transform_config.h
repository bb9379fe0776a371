// data.transforms.train and data.transforms.eval: torchvision's transforms by name, listed in
// YAML, turned into the steps image::TransformPipeline applies. A final normalize step gives the
// loader's per-channel mean and std instead (the loader normalises every split on the device).
//   transforms:
//     train: [{random_crop: {size: 28, padding: 4}}, horizontal_flip, {color_jitter: 0.2}]
//     eval: [{resize: 32}, {center_crop: 28}]
// A step is a name (its defaults), or a map of one name to a map of its parameters, or to one
// value for its first parameter (`resize: 72` is Resize(72)). The names are torchvision's, in
// snake case or as its classes are called (RandomResizedCrop).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/image/transform_pipeline.h"

namespace trainer::data {

struct TransformList {
  std::vector<image::TransformStep> steps;
  std::optional<std::vector<double>> mean, std;  // a final normalize step's
};

// Throws trainer::Error at `where` (the key and its origin) with the item's position for an
// unknown name or parameter (with the closest known one), a value of the wrong type or range, or
// a normalize step that is not the last.
TransformList parse_transform_list(const config::Node& list, const std::string& where);

// The names parse_transform_list accepts, snake case, in the order the reference lists them.
const std::vector<std::string>& transform_names();

}  // namespace trainer::data
