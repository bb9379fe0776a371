#include "trainer/data/batch_transform.h"

#include <string>

#include <ATen/ATen.h>

#include "trainer/util/error.h"

namespace trainer::data {

at::Tensor to_float_normalized(const at::Tensor& uint8_batch, double mean, double std) {
  if (!(std > 0)) {
    throw Error("data.normalize.std", "must be positive, got " + std::to_string(std),
                "Set data.normalize.std to the dataset's pixel standard deviation.");
  }
  // shift + scale * x in a single fused kernel: the 0-dim float `shift` makes the result float,
  // and the uint8 input is converted on load instead of materialising a float copy first.
  const double scale = 1.0 / (255.0 * std);
  const at::Tensor shift = at::scalar_tensor(-mean / std, at::TensorOptions().dtype(at::kFloat));
  return at::add(shift, uint8_batch, scale);
}

at::Tensor to_float_normalized(const at::Tensor& uint8_batch, const at::Tensor& shift, const at::Tensor& scale) {
  return at::addcmul(shift, uint8_batch.to(at::kFloat), scale);
}

at::Tensor augment(const at::Tensor& batch, int crop_padding, bool flip, at::Generator& gen) {
  if (crop_padding < 0) {
    throw Error("data.augment.random_crop_padding", "must be >= 0, got " + std::to_string(crop_padding));
  }
  if (crop_padding == 0 && !flip) return batch;
  if (batch.dim() != 4) {
    throw Error("data.augment",
                "augmentation expects [N, C, H, W] image batches, got " + std::to_string(batch.dim()) + " dimensions",
                "Disable data.augment for this dataset.");
  }
  const int64_t n = batch.size(0), c = batch.size(1), h = batch.size(2), w = batch.size(3);
  const int64_t p = crop_padding;
  const int64_t padded_w = w + 2 * p;
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);

  // Per-sample offsets and flips, drawn on the CPU from `gen` in a fixed order.
  at::Tensor top = at::randint(0, 2 * p + 1, {n, 1, 1}, gen, cpu_long);
  at::Tensor left = at::randint(0, 2 * p + 1, {n, 1, 1}, gen, cpu_long);
  at::Tensor columns = at::arange(w, cpu_long).view({1, 1, w});
  if (flip) {
    at::Tensor mirrored = at::randint(0, 2, {n, 1, 1}, gen, cpu_long).to(at::kBool);
    columns = at::where(mirrored, (w - 1) - columns, columns);
  }
  at::Tensor rows = at::arange(h, cpu_long).view({1, h, 1});
  // Flat index of every output pixel in its padded image: one gather does crop and flip.
  at::Tensor index = ((top + rows) * padded_w + left + columns).view({n, 1, h * w});
  index = index.to(batch.device()).expand({n, c, h * w});

  at::Tensor source = p > 0 ? at::constant_pad_nd(batch, {p, p, p, p}, 0) : batch;
  source = source.reshape({n, c, -1});
  return at::gather(source, 2, index).view({n, c, h, w});
}

}  // namespace trainer::data
