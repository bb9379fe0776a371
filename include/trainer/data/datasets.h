// Loading a dataset by name into train / validation / test splits, through a registry that
// users extend: TRAINER_REGISTER_DATASET("mydata", my_factory) in their own binary makes
// `data.name=mydata` work. Built-ins: "fashion_mnist" (IDX files), "image_folder"
// (image_folder_dataset.h) and "synthetic".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/registry.h"
#include "trainer/data/data_options.h"
#include "trainer/data/tensor_dataset.h"

namespace trainer::data {

struct DataSplits {
  std::shared_ptr<const Dataset> train, val, test;

  DataSplits() = default;
  DataSplits(std::shared_ptr<const Dataset> train_split, std::shared_ptr<const Dataset> val_split,
             std::shared_ptr<const Dataset> test_split);
  // Splits held in memory, as a registered factory usually makes them.
  DataSplits(TensorDataset train_split, TensorDataset val_split, TensorDataset test_split);
};

using DatasetFactory = std::function<DataSplits(const DataOptions&)>;

// Name -> factory: config::Registry (the one registry template). The built-ins are registered
// explicitly the first time the registry is used (static registration objects in a static library
// would be dropped by the linker); a user's own registrations live in their executable, where they
// are kept. Adding a taken name replaces its factory.
class DatasetRegistry : public config::Registry<DatasetFactory> {
 public:
  static DatasetRegistry& instance();

  using Registry::get;
  // The factory of `name`; unknown names throw trainer::Error at data.name.
  DatasetFactory get(const std::string& name) const { return get(name, "data.name"); }

 private:
  DatasetRegistry();
};

// The splits of `options.name`, made by its registered factory.
DataSplits load_datasets(const DataOptions& options);

// The built-in factories, also callable directly.
// Fashion-MNIST from options.root/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz: uint8
// [N, 1, 28, 28] images, int64 labels; val is a seeded random val_fraction of the 60000
// training images (both splits keep the files' order), test is t10k.
DataSplits load_fashion_mnist(const DataOptions& options);
// options.num_samples images of options.image_shape for train + val, plus a test split of
// num_samples / 8 (at least 1). Each class has a random template; an image is its class's
// template blended with noise, so labels are learnable from the pixels (a nearest-class-mean
// classifier scores well above 90%). Everything depends only on options.seed.
DataSplits make_synthetic(const DataOptions& options);

// The (train, val) indices of a dataset of `size` samples: round(val_fraction * size) of them,
// chosen by a permutation seeded from `seed`, go to val; both sorted. Every dataset kind splits
// this way, so the same seed holds out the same samples.
std::pair<at::Tensor, at::Tensor> split_indices(int64_t size, double val_fraction, uint64_t seed);

// Splits `dataset` into (train, val): round(val_fraction * size) samples chosen by a
// permutation seeded from `seed` go to val. Both keep the original relative order.
std::pair<TensorDataset, TensorDataset> split_train_val(const TensorDataset& dataset, double val_fraction,
                                                        uint64_t seed);

}  // namespace trainer::data

// At namespace scope in a user's source file: TRAINER_REGISTER_DATASET("mydata", make_mydata);
// (variadic, so a lambda with commas in its body can be passed directly).
#define TRAINER_REGISTER_DATASET(name, ...) \
  TRAINER_REGISTRY_ADD(::trainer::data::DatasetRegistry::instance(), name, __VA_ARGS__)
