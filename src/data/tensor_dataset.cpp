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
  return Batch{inputs_.index_select(0, indices), targets_.index_select(0, indices)};
}

TensorDataset TensorDataset::subset(const at::Tensor& indices) const {
  auto batch = get_batch(indices);
  return TensorDataset(std::move(batch.inputs), std::move(batch.targets));
}

}  // namespace trainer::data
