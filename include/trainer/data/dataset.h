// What the loader reads batches from: a numbered collection of (input, label) samples. Two kinds
// ship: TensorDataset (tensors in memory, a batch is one index_select) and ImageFolderDataset
// (image files decoded and transformed per sample). A user's registered dataset returns either,
// or its own subclass.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace trainer::data {

struct Batch {
  at::Tensor inputs;
  at::Tensor targets;
  // Which samples the rows are (int64, CPU), set by a dataset that may leave samples out
  // (data.on_bad_sample=skip); undefined when the rows are exactly the indices asked for.
  at::Tensor indices = {};
  // The samples' names, set by a dataset that learns them only as it reads (data=webdataset's
  // shard:key, for evaluation and prediction); empty: Dataset::sample_name gives them.
  std::vector<std::string> names = {};
  // How many samples the loader asked for (the rows plus those left out); 0 outside a BatchLoader.
  int64_t requested = 0;
};

// A regression's target column: its values are learnt as (value - mean) / std, and the model's
// outputs are brought back to the target's units as output * std + mean.
struct RegressionTarget {
  double mean = 0.0;
  double std = 1.0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  // The samples `indices` (int64, 1-D, CPU), in that order, as one CPU batch: inputs [N, ...]
  // (uint8 images are normalised by the loader), targets int64 [N] (float32 [N] for a regression). `epoch` seeds
  // per-sample random transforms together with each sample's index, so a batch depends only on (run seed, epoch,
  // indices), never on which thread makes it. May be called from several threads at once. A dataset that skips
  // unreadable samples returns fewer than indices.size(0).
  virtual Batch get_batch(const at::Tensor& indices, int64_t epoch) const = 0;
  // One input's shape without the batch dimension ([C, H, W] for images), known without loading.
  virtual std::vector<int64_t> sample_shape() const = 0;
  // The class names in label order when the data names its classes (an image folder's
  // sub-folders); empty otherwise.
  virtual std::vector<std::string> class_names() const { return {}; }
  // The number of classes when the data determines it (data=tensors: the largest target + 1);
  // 0 when it does not, and data.num_classes or the class names decide.
  virtual int64_t num_classes() const { return 0; }
  // True when making a batch reads and decodes files: loader threads then earn their keep even on
  // a CPU device (num_workers=auto).
  virtual bool reads_files() const { return false; }
  // A name for sample `index` in a prediction file: its path for files, else its number.
  virtual std::string sample_name(int64_t index) const { return std::to_string(index); }
  // Samples skipped as unreadable so far (data.on_bad_sample=skip), over every epoch.
  virtual int64_t skipped_samples() const { return 0; }
  // How raw records became inputs, as JSON, when the data fitted it to the training split
  // (data=csv: the columns, their categories and standardisation; data=webdataset: the training
  // shards' counts and sizes, which a resumed fit compares); empty otherwise. Kept in every
  // checkpoint, so that evaluating and predicting encode new records exactly as training did.
  virtual std::string encoding() const { return {}; }
  // Set when the targets are numbers to regress (data.task=regression): float32 [N], scaled as
  // RegressionTarget says (NaN where a table to predict has no target); unset: class indices.
  virtual std::optional<RegressionTarget> regression() const { return std::nullopt; }
  // A regression's target of sample `index` as the data gave it (its batches hold it scaled, in
  // float32, which would not come back exactly): what predictions.csv shows. Unset: not kept.
  virtual std::optional<float> target_value(int64_t /*index*/) const { return std::nullopt; }
  // A stream (data=webdataset) orders its samples itself: it returns the part one data-parallel
  // rank reads, whose size() is that rank's samples per epoch and whose get_batch takes positions
  // in its stream (0, 1, 2, ... in order), padded to the same count on every rank when `training`
  // (as DistributedSampler pads), each sample exactly once over the ranks when not. Null (every
  // other dataset): the sampler deals indices to the ranks.
  virtual std::shared_ptr<const Dataset> rank_share(int /*rank*/, int /*world_size*/, bool /*training*/) const {
    return nullptr;
  }
  // Told by the loader before an epoch's first get_batch: the epoch, and the first position it will
  // ask for (a run resumed mid-epoch skips the batches it has seen). A stream restarts there.
  virtual void begin_epoch(int64_t /*epoch*/, int64_t /*first_position*/) const {}
};

}  // namespace trainer::data
