#include "trainer/data/tensor_dataset.h"

#include <cmath>
#include <string>
#include <utility>

#include <ATen/ATen.h>

#include "trainer/util/error.h"

namespace trainer::data {

TensorDataset::TensorDataset(at::Tensor inputs, at::Tensor targets)
    : inputs_(std::move(inputs)), targets_(std::move(targets)) {
  if (!inputs_.defined() || !targets_.defined() || inputs_.dim() == 0 || targets_.dim() == 0) {
    throw Error("TensorDataset", "inputs and targets must be tensors of at least one dimension",
                "Pass [N, ...] tensors whose first dimension indexes the samples.");
  }
  if (inputs_.size(0) != targets_.size(0)) {
    throw Error("TensorDataset",
                "inputs hold " + std::to_string(inputs_.size(0)) + " samples but targets hold " +
                    std::to_string(targets_.size(0)),
                "Pass one target per input.");
  }
  size_ = inputs_.size(0);
}

Batch TensorDataset::get_batch(const at::Tensor& indices) const {
  const at::Tensor rows = rows_.defined() ? rows_.index_select(0, indices) : indices;
  at::Tensor targets = targets_.index_select(0, rows);
  // A file's uint8 or int32 labels become int64; a regression's float32 values stay.
  if (targets.scalar_type() != at::kLong && !targets.is_floating_point()) targets = targets.to(at::kLong);
  Batch batch{inputs_.index_select(0, rows), std::move(targets)};
  if (!finite_key_.empty()) check_finite(batch.inputs, rows, finite_path_, finite_key_);
  return batch;
}

namespace {

// The first non-finite value of `values` as (sample position, value position), or (-1, -1).
std::pair<int64_t, int64_t> first_not_finite(const at::Tensor& values) {
  if (!values.is_floating_point() || values.numel() == 0) return {-1, -1};
  // A float64 sum is finite exactly when every value is (float32's largest times any count stays
  // far below float64's; a float64 file's huge values may overflow it: then the search decides).
  if (std::isfinite(at::sum(values, at::kDouble).item<double>())) return {-1, -1};
  const at::Tensor bad = at::logical_not(at::isfinite(values.reshape({values.size(0), -1})));
  const at::Tensor samples = at::nonzero(bad.any(1));
  if (samples.numel() == 0) return {-1, -1};
  const int64_t sample = samples[0][0].item<int64_t>();
  return {sample, at::nonzero(bad[sample])[0][0].item<int64_t>()};
}

[[noreturn]] void throw_not_finite(const at::Tensor& values, int64_t sample, int64_t position, int64_t row,
                                   const std::string& path, const std::string& key) {
  const double value = values.reshape({values.size(0), -1})[sample][position].item<double>();
  throw Error(key,
              path + ": sample " + std::to_string(row) + " holds " + (std::isnan(value) ? "NaN" : "an infinity") +
                  " (its value " + std::to_string(position) + "): inputs must be finite numbers",
              "Replace or drop the non-finite values before saving (numpy: x[~numpy.isfinite(x)] = 0, or keep the "
              "rows where numpy.isfinite(x).all(axis=tuple(range(1, x.ndim)))).");
}

}  // namespace

void check_finite(const at::Tensor& values, int64_t first_row, const std::string& path, const std::string& key) {
  const auto [sample, position] = first_not_finite(values);
  if (sample >= 0) throw_not_finite(values, sample, position, first_row + sample, path, key);
}

void check_finite(const at::Tensor& values, const at::Tensor& rows, const std::string& path, const std::string& key) {
  const auto [sample, position] = first_not_finite(values);
  if (sample >= 0) throw_not_finite(values, sample, position, rows[sample].item<int64_t>(), path, key);
}

std::vector<int64_t> TensorDataset::sample_shape() const {
  if (!inputs_.defined()) return {};
  const auto sizes = inputs_.sizes();
  return {sizes.begin() + 1, sizes.end()};
}

TensorDataset TensorDataset::subset(const at::Tensor& indices) const {
  auto batch = get_batch(indices);
  TensorDataset rows(std::move(batch.inputs), std::move(batch.targets));
  rows.class_names_ = class_names_;
  rows.num_classes_ = num_classes_;
  rows.encoding_ = encoding_;
  rows.regression_ = regression_;
  if (target_values_.defined()) {
    rows.target_values_ = target_values_.index_select(0, rows_.defined() ? rows_.index_select(0, indices) : indices);
  }
  return rows;
}

std::optional<float> TensorDataset::target_value(int64_t index) const {
  if (!target_values_.defined() || index < 0 || index >= size_) return std::nullopt;
  const int64_t row = rows_.defined() ? rows_.data_ptr<int64_t>()[index] : index;
  return target_values_.data_ptr<float>()[row];
}

TensorDataset TensorDataset::view(const at::Tensor& indices) const {
  TensorDataset rows = *this;
  rows.rows_ = rows_.defined() ? rows_.index_select(0, indices) : indices.to(at::kLong).contiguous();
  rows.size_ = rows.rows_.size(0);
  return rows;
}

const TensorDataset& as_tensors(const Dataset& dataset) {
  const auto* tensors = dynamic_cast<const TensorDataset*>(&dataset);
  if (tensors == nullptr) {
    throw Error("data", "this dataset reads its samples from files, not from tensors in memory",
                "Read it batch by batch with get_batch().");
  }
  return *tensors;
}

}  // namespace trainer::data
