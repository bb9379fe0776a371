// Batch-level image transforms, applied with a few tensor ops to a whole [N, C, H, W] batch on
// the batch's own device (no per-sample work): uint8 -> normalised float, and the training
// augmentations (random crop with zero padding, horizontal flip), reproducible from a generator.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace trainer::data {

// (x / 255 - mean) / std as float32, computed in one pass over a uint8 batch.
at::Tensor to_float_normalized(const at::Tensor& uint8_batch, double mean, double std);
// The same per channel: x * scale + shift as float32, with `shift` = -mean/std and `scale` =
// 1/(255 std) shaped to broadcast over the batch ([1, C, 1, 1] for images).
at::Tensor to_float_normalized(const at::Tensor& uint8_batch, const at::Tensor& shift, const at::Tensor& scale);

// Pads each image of `batch` ([N, C, H, W], any dtype) with `crop_padding` zeros on every side
// and crops an H x W window at a random offset, then mirrors it left-right with probability 1/2
// when `flip`. Offsets and flips are drawn per sample from `gen` (a CPU generator), so the
// result depends only on the generator's state. Returns `batch` itself when there is nothing to
// do. Augment uint8 batches before normalising: padding then means black, as in torchvision.
at::Tensor augment(const at::Tensor& batch, int crop_padding, bool flip, at::Generator& gen);

}  // namespace trainer::data
