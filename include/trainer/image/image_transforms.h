// The per-sample image operations behind data.transforms, each with the meaning and the
// arithmetic of torchvision's functional transforms on the PIL images ImageFolder loads (which
// call Pillow): the same crop offsets, the same rounding of blends, the same luma weights. The
// random transforms draw their parameters here from a SeededRandom (per sample, so the result does
// not depend on which thread made it); given the same parameters they produce torchvision's bytes.
#pragma once

#include "trainer/image/image.h"
#include "trainer/util/seeded_random.h"

namespace trainer::image {

void crop(const Image& in, const CropBox& box, Image& out);

// `in` framed by zero (black) borders of the given widths.
void pad(const Image& in, int left, int top, int right, int bottom, Image& out);

// torchvision's center_crop: the window's offset is round((size - crop) / 2) (round half to
// even, as Python's round); a crop larger than the image first pads it with zeros, split as
// torchvision splits it.
void center_crop(const Image& in, int height, int width, Image& out, Image& scratch);

void horizontal_flip(Image& image);

// RandomResizedCrop.get_params: up to ten tries of an area fraction in [scale_min, scale_max) and
// an aspect ratio log-uniform in [ratio_min, ratio_max) that fit; else the whole image cropped to
// the nearest allowed ratio, centred.
CropBox random_resized_crop_box(int height, int width, double scale_min, double scale_max, double ratio_min,
                                double ratio_max, SeededRandom& random);

// ImageEnhance's blends: out = degenerate + factor * (image - degenerate), truncated toward zero
// and clamped to [0, 255] as Pillow's Image.blend does. Brightness blends with black, contrast
// with the mean gray level (of the luma image, rounded), saturation with the image's own luma.
void adjust_brightness(Image& image, double factor);
void adjust_contrast(Image& image, double factor);
void adjust_saturation(Image& image, double factor);

// Pillow's convert("L") (ITU-R 601-2 luma in 16-bit fixed point) and convert("RGB") from gray.
void rgb_to_gray(const Image& in, Image& out);
void gray_to_rgb(const Image& in, Image& out);

// ToTensor + Normalize into `out` (channels x height x width floats): (x / 255 - mean[c]) / std[c]
// in float32, in that order, as torchvision computes it.
void normalize_to_chw(const Image& image, const float* mean, const float* std, float* out);

}  // namespace trainer::image
