#include "trainer/data/tensor_dataset.h"

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
  return Batch{inputs_.index_select(0, rows), std::move(targets)};
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
