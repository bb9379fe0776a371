// Everything the data module needs from the `data` config group, read once at the edge of the
// module (DataOptions::from_config) so the training loop never walks the config tree. Field
// defaults match configs/data/fashion_mnist.yaml; synthetic-only fields are ignored elsewhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/data/transform_config.h"

namespace trainer::data {

struct DataOptions {
  std::string name;  // a registered dataset: "fashion_mnist", "synthetic" or a user's
  std::string root;  // directory holding the dataset's files
  int64_t batch_size = 128;
  double val_fraction = 0.1;  // share of the training set held out for validation, in [0, 1)
  // Loader threads; 0 loads batches in the caller's thread. kAutoWorkers (`num_workers: auto`,
  // the shipped default) lets the loader pick: min(4 x GPUs, cores) on CUDA, the cores on CPU.
  static constexpr int kAutoWorkers = -1;
  int num_workers = kAutoWorkers;
  bool pin_memory = true;  // only used when batches go to a CUDA device
  // normalize.{mean,std} on the [0, 1] pixel scale: one value for every channel, or one per channel.
  std::vector<double> mean{0.2860}, std{0.3530};
  int random_crop_padding = 0;                  // augment.random_crop_padding (training batches only)
  bool horizontal_flip = false;                 // augment.horizontal_flip (training batches only)
  int64_t num_samples = 4096;                   // synthetic: training + validation images
  std::vector<int64_t> image_shape{1, 28, 28};  // synthetic: [C, H, W]
  int64_t num_classes = 10;                     // data=tensors: 0 (null) takes the largest target + 1
  // image_folder (image_folder_dataset.h):
  int channels = 3;                     // 1 (gray) or 3 (RGB): every image is converted to it
  int image_size = 0;                   // square side after the transforms; 0 (null): the images' own size
  std::string augment_preset = "none";  // augment: none | imagenet (transform_pipeline.h)
  bool skip_bad_samples = false;        // on_bad_sample: skip (true) or error
  // transforms.train / transforms.eval (transform_config.h): given, they replace the augment
  // preset's steps for training / for validation, test and predict.
  std::optional<TransformList> train_transforms, eval_transforms;
  // tensors (tensor_files.h): arrays saved from Python, memory-mapped. Files are .npy or
  // .safetensors; a key names the tensor in a safetensors file ("": the file's only one).
  std::string inputs, targets, input_key, target_key;
  std::string test_inputs, test_targets;  // the test split's files ("": none)
  std::string test_inputs_where;          // where data.test_inputs is set, for its error
  // Set by the engine for trainer predict: the test split may come without targets (data=tensors:
  // data.test_inputs alone; each target is then -1, unknown).
  bool targets_optional = false;
  // Set by the engine for validate, test and predict from the checkpoint's summary: the shape and
  // classes the model was trained on, and the split the command reads ("val" or "test"). With
  // them data=webdataset reads that split's shards alone, not the training shards.
  std::vector<int64_t> trained_sample_shape;
  int64_t trained_num_classes = 0;
  std::string evaluated_split;
  // csv (csv_dataset.h): a table with a header row. `path` holds the train and val rows,
  // `test_path` the test split's ("": none); `target` names the label column, `features` the input
  // columns (empty: all but the target), `categorical` those of them one-hot encoded.
  std::string path, test_path, target;
  std::vector<std::string> features, categorical;
  char delimiter = 0;       // 0 (null): tab for .tsv/.tab files, else comma
  bool standardize = true;  // numeric features to zero mean, unit variance (train split's statistics)
  // task: regression (true): the target column holds numbers to predict (MSE loss; metrics mae,
  // rmse, r2); classification (false): class indices or names.
  bool regression = false;
  // A checkpoint's encoding of the records (Dataset::encoding(), JSON), set by the engine when it
  // evaluates or resumes a checkpoint: used as it is instead of being fitted to the training split.
  std::string encoding;
  // webdataset (webdataset_dataset.h): tar shards, each entry a path or a brace pattern
  // ("train-{000..127}.tar"); val and test may be empty (no such split).
  std::vector<std::string> shards, val_shards, test_shards;
  int64_t shuffle_buffer = 1000;  // training samples held to draw the next one from at random
  std::string label_key;          // "" : labels from each sample's .cls; else this key of its .json
  uint64_t seed = 42;             // the run's seed: fixes the validation split and synthetic data
  // The whole `data` section, for a registered dataset's own keys (`section->get<double>("noise")`).
  // Set by from_config; it views the job's config, so read it inside the dataset factory only.
  std::optional<config::ConfigView> section;

  // Reads the keys of configs/data/*.yaml from `data` (the `data` sub-view). Throws
  // trainer::Error naming the key and its origin for an unknown dataset name (listing the
  // registered ones) or an out-of-range value.
  static DataOptions from_config(const config::ConfigView& data, uint64_t seed);
};

}  // namespace trainer::data
