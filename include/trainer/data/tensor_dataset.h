// An in-memory dataset of two tensors indexed along dimension 0, read a whole batch at a time
// (one index_select per tensor, no per-sample work). Images stay uint8 [N, C, H, W] in memory,
// four times smaller than float; batches are converted on their device (batch_transform.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "trainer/data/dataset.h"

namespace trainer::data {

class TensorDataset : public Dataset {
 public:
  TensorDataset() = default;  // empty; make real ones with the constructor below
  // `inputs` and `targets` must have the same size along dimension 0 (else trainer::Error).
  TensorDataset(at::Tensor inputs, at::Tensor targets);

  int64_t size() const override { return size_; }
  // Rows `indices` (int64, 1-D) of both tensors, in that order; integer targets as int64,
  // floating-point ones (a regression's) as they are.
  Batch get_batch(const at::Tensor& indices) const;
  Batch get_batch(const at::Tensor& indices, int64_t /*epoch*/) const override { return get_batch(indices); }
  std::vector<int64_t> sample_shape() const override;
  // The class names in label order when the data has them (Fashion-MNIST's ten); empty otherwise.
  std::vector<std::string> class_names() const override { return class_names_; }
  void set_class_names(std::vector<std::string> names) { class_names_ = std::move(names); }
  int64_t num_classes() const override { return num_classes_; }
  void set_num_classes(int64_t count) { num_classes_ = count; }
  std::string encoding() const override { return encoding_; }
  void set_encoding(std::string json) { encoding_ = std::move(json); }
  std::optional<RegressionTarget> regression() const override { return regression_; }
  void set_regression(RegressionTarget target) { regression_ = target; }
  // Float inputs too large to check whole at load (data=tensors): each batch's inputs are checked
  // as the batch is drawn, a NaN or an infinity a trainer::Error at `key` naming `path` and the
  // sample's row (one pass summing the batch in float64; the search only when it is not finite).
  void check_finite_per_batch(std::string key, std::string path) {
    finite_key_ = std::move(key);
    finite_path_ = std::move(path);
  }
  // A regression's targets unscaled (float32, one per row of targets()): target_value's.
  void set_target_values(at::Tensor values) { target_values_ = std::move(values); }
  std::optional<float> target_value(int64_t index) const override;
  // A dataset holding copies of the rows `indices` (and the same class names).
  TensorDataset subset(const at::Tensor& indices) const;
  // A dataset of the rows `indices` that shares this one's tensors, copying nothing: a split of a
  // memory-mapped file stays on disk until its batches are drawn.
  TensorDataset view(const at::Tensor& indices) const;

  // The whole tensors, before a view's choice of rows.
  const at::Tensor& inputs() const { return inputs_; }
  const at::Tensor& targets() const { return targets_; }

 private:
  at::Tensor inputs_;
  at::Tensor targets_;
  at::Tensor rows_;  // a view's rows of inputs_ and targets_ (int64); undefined: all, in order
  int64_t size_ = 0;
  int64_t num_classes_ = 0;
  std::vector<std::string> class_names_;
  std::string encoding_;
  std::optional<RegressionTarget> regression_;
  at::Tensor target_values_;  // float32 [rows of targets_], or undefined
  std::string finite_key_;    // check_finite_per_batch's; empty: no check
  std::string finite_path_;
};

// Throws trainer::Error at `key` when `values` (floating point, [n, ...]) holds a NaN or an
// infinity, naming `path`, the first such sample as the file's row `first_row` + its position,
// and its position within the sample. Integer values pass.
void check_finite(const at::Tensor& values, int64_t first_row, const std::string& path, const std::string& key);
// The same for a batch whose sample i is the file's row rows[i] (int64).
void check_finite(const at::Tensor& values, const at::Tensor& rows, const std::string& path, const std::string& key);

// `dataset` as the TensorDataset it is; trainer::Error when it is another kind (an image folder).
const TensorDataset& as_tensors(const Dataset& dataset);

}  // namespace trainer::data
