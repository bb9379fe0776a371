#include "trainer/data/datasets.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "trainer/data/csv_dataset.h"
#include "trainer/data/idx_reader.h"
#include "trainer/data/image_folder_dataset.h"
#include "trainer/data/sampler.h"
#include "trainer/data/tensor_files.h"
#include "trainer/data/webdataset_dataset.h"
#include "trainer/util/error.h"

namespace trainer::data {
namespace {

// Distinct streams derived from the one run seed, so the split and the synthetic data do not
// reuse the sampler's per-epoch permutations.
constexpr uint64_t kSplitStream = 0x73706c6974ULL;      // "split"
constexpr uint64_t kSyntheticStream = 0x73796e7468ULL;  // "synth"

}  // namespace

DataSplits::DataSplits(std::shared_ptr<const Dataset> train_split, std::shared_ptr<const Dataset> val_split,
                       std::shared_ptr<const Dataset> test_split)
    : train(std::move(train_split)), val(std::move(val_split)), test(std::move(test_split)) {
  if (!train || !val || !test)
    throw Error("DataSplits", "a split is missing", "Give all three splits (an empty TensorDataset for none).");
}

DataSplits::DataSplits(TensorDataset train_split, TensorDataset val_split, TensorDataset test_split)
    : DataSplits(std::make_shared<const TensorDataset>(std::move(train_split)),
                 std::make_shared<const TensorDataset>(std::move(val_split)),
                 std::make_shared<const TensorDataset>(std::move(test_split))) {}

DatasetRegistry::DatasetRegistry() : Registry("dataset", "TRAINER_REGISTER_DATASET", Taken::kReplace) {
  add("csv", load_csv);
  add("fashion_mnist", load_fashion_mnist);
  add("image_folder", load_image_folder);
  add("synthetic", make_synthetic);
  add("tensors", load_tensor_files);
  add("webdataset", load_webdataset);
}

DatasetRegistry& DatasetRegistry::instance() {
  static DatasetRegistry registry;
  return registry;
}

DataSplits load_datasets(const DataOptions& options) { return DatasetRegistry::instance().get(options.name)(options); }

std::pair<at::Tensor, at::Tensor> split_indices(int64_t size, double val_fraction, uint64_t seed) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    throw Error("data.val_fraction", "must be in [0, 1), got " + std::to_string(val_fraction));
  }
  const auto val_count = static_cast<int64_t>(std::llround(val_fraction * static_cast<double>(size)));
  const at::Tensor perm = random_permutation(size, mix_seed(seed, kSplitStream));
  // Sorted, so both splits keep the source order (sequential reads, stable across fractions).
  at::Tensor val_indices = std::get<0>(perm.narrow(0, 0, val_count).sort());
  at::Tensor train_indices = std::get<0>(perm.narrow(0, val_count, size - val_count).sort());
  return {train_indices, val_indices};
}

std::pair<TensorDataset, TensorDataset> split_train_val(const TensorDataset& dataset, double val_fraction,
                                                        uint64_t seed) {
  const auto [train_indices, val_indices] = split_indices(dataset.size(), val_fraction, seed);
  return {dataset.subset(train_indices), dataset.subset(val_indices)};
}

DataSplits load_fashion_mnist(const DataOptions& options) {
  auto load = [&](const std::string& prefix) {
    const std::string images_path = options.root + "/" + prefix + "-images-idx3-ubyte.gz";
    const std::string labels_path = options.root + "/" + prefix + "-labels-idx1-ubyte.gz";
    at::Tensor images = read_idx(images_path);
    at::Tensor labels = read_idx(labels_path);
    if (images.scalar_type() != at::kByte || images.dim() != 3 || images.size(1) != 28 || images.size(2) != 28) {
      throw Error(images_path,
                  "expected uint8 images of shape [N, 28, 28], got " + std::to_string(images.dim()) + "-D " +
                      std::string(c10::toString(images.scalar_type())) + " data",
                  "Point data.root at the Fashion-MNIST files.");
    }
    if (labels.scalar_type() != at::kByte || labels.dim() != 1 || labels.size(0) != images.size(0)) {
      throw Error(labels_path, "expected " + std::to_string(images.size(0)) + " uint8 labels (one per image)",
                  "Point data.root at the Fashion-MNIST files.");
    }
    // A label outside the classes would otherwise fail mid-epoch inside the loss.
    const int64_t largest = labels.numel() > 0 ? labels.max().item<int64_t>() : 0;
    if (largest >= options.num_classes) {
      const int64_t at = (labels >= options.num_classes).nonzero().view(-1)[0].item<int64_t>();
      throw Error(labels_path,
                  "label " + std::to_string(labels[at].item<int64_t>()) + " of sample " + std::to_string(at) +
                      " is outside the " + std::to_string(options.num_classes) + " classes 0.." +
                      std::to_string(options.num_classes - 1),
                  "The file is damaged (install or download it again), or set data.num_classes to the number of "
                  "classes it holds.");
    }
    return TensorDataset(images.unsqueeze(1), labels.to(at::kLong));
  };
  TensorDataset train_pool = load("train");
  TensorDataset test = load("t10k");
  // The ten classes' names as torchvision's FashionMNIST.classes gives them, in label order: kept
  // with the run and its checkpoints, and what trainer predict writes.
  if (options.num_classes == 10) {
    std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    train_pool.set_class_names(names);
    test.set_class_names(std::move(names));
  }
  auto [train, val] = split_train_val(train_pool, options.val_fraction, options.seed);
  return DataSplits{std::move(train), std::move(val), std::move(test)};
}

DataSplits make_synthetic(const DataOptions& options) {
  if (options.num_samples < 1 || options.num_classes < 1 || options.image_shape.empty()) {
    throw Error("data", "synthetic data needs num_samples >= 1, num_classes >= 1 and an image_shape");
  }
  int64_t pixels = 1;
  for (int64_t d : options.image_shape) {
    if (d < 1) throw Error("data.image_shape", "every dimension must be >= 1");
    pixels *= d;
  }
  const int64_t test_count = std::max<int64_t>(1, options.num_samples / 8);
  const int64_t total = options.num_samples + test_count;

  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(mix_seed(options.seed, kSyntheticStream));
  const at::Tensor templates = at::rand({options.num_classes, pixels}, gen, at::kFloat);
  const at::Tensor labels = at::randint(0, options.num_classes, {total}, gen, at::kLong);
  const at::Tensor noise = at::rand({total, pixels}, gen, at::kFloat);
  // 40% class template, 60% noise: clearly separable, yet no two images alike.
  at::Tensor images = templates.index_select(0, labels).mul_(0.4).add_(noise, 0.6);
  images = images.mul_(255.0).round_().to(at::kByte);

  std::vector<int64_t> shape{total};
  shape.insert(shape.end(), options.image_shape.begin(), options.image_shape.end());
  TensorDataset all(images.view(shape), labels);
  TensorDataset pool(all.inputs().narrow(0, 0, options.num_samples), labels.narrow(0, 0, options.num_samples));
  TensorDataset test(all.inputs().narrow(0, options.num_samples, test_count).clone(),
                     labels.narrow(0, options.num_samples, test_count));
  auto [train, val] = split_train_val(pool, options.val_fraction, options.seed);
  return DataSplits{std::move(train), std::move(val), std::move(test)};
}

}  // namespace trainer::data
