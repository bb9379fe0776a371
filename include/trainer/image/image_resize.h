// Resizing with the arithmetic of Pillow's Image.resize(..., BILINEAR), which torchvision's
// Resize, RandomResizedCrop and the evaluation presets call on the PIL images ImageFolder loads:
// a triangle filter widened by the scale factor when shrinking (so shrinking averages every source
// pixel instead of skipping some: the "antialias"), horizontal pass first, coefficients in 22-bit
// fixed point, rounded the same way. The output is byte for byte Pillow's (tests/image compare it
// with Pillow itself).
#pragma once

#include "trainer/image/image.h"

namespace trainer::image {

// `in` resized to out_height x out_width (both >= 1) into `out` (not `in`); `scratch` holds the
// horizontal pass. Same size: a copy, as Pillow does.
void resize_bilinear(const Image& in, int out_height, int out_width, Image& out, Image& scratch);

// The output size of torchvision's Resize(size) for an int `size`: the shorter side becomes
// `size`, the longer int(size * longer / shorter) (truncated), the orientation kept.
Size shorter_side_resized(int height, int width, int size);

}  // namespace trainer::image
