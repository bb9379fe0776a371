// Loading datasets by name: Fashion-MNIST from Debian's files with a seeded train/val split,
// synthetic data whose labels a simple classifier learns, the registry users extend, and
// DataOptions read from the shipped configs.
#include "trainer/data/datasets.h"

#include <string>
#include <vector>

#include <ATen/ATen.h>

#define CATCH_CONFIG_PREFIX_ALL
#include <catch2/catch.hpp>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/data/data_options.h"
#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::config::ConfigView;
using trainer::config::load_yaml_file;
using trainer::config::load_yaml_string;
using trainer::data::as_tensors;
using trainer::data::DataOptions;
using trainer::data::DatasetRegistry;
using trainer::data::DataSplits;
using trainer::data::load_datasets;
using trainer::data::TensorDataset;

namespace {

DataOptions fashion(double val_fraction = 0.1, uint64_t seed = 42) {
  DataOptions o;
  o.name = "fashion_mnist";
  o.root = "/usr/share/datasets/fashion-mnist";
  o.val_fraction = val_fraction;
  o.seed = seed;
  return o;
}

DataOptions synthetic(uint64_t seed = 42) {
  DataOptions o;
  o.name = "synthetic";
  o.num_samples = 4096;
  o.seed = seed;
  return o;
}

// Accuracy on `test` of classifying each image by the nearest class mean of `train`.
double nearest_mean_accuracy(const TensorDataset& train, const TensorDataset& test, int64_t classes) {
  const at::Tensor x = train.inputs().flatten(1).to(at::kFloat);
  at::Tensor means = at::zeros({classes, x.size(1)});
  means.index_add_(0, train.targets(), x);
  means /= train.targets().bincount({}, classes).clamp_min(1).unsqueeze(1).to(at::kFloat);
  const at::Tensor predicted = at::cdist(test.inputs().flatten(1).to(at::kFloat), means).argmin(1);
  return predicted.eq(test.targets()).to(at::kDouble).mean().item<double>();
}

std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "no error";
}

DataSplits tiny_dataset(const DataOptions& o) {
  const at::Tensor x = at::zeros({o.num_samples, 2}, at::kByte);
  const at::Tensor y = at::arange(o.num_samples, at::kLong);
  return DataSplits{TensorDataset(x, y), TensorDataset(x.narrow(0, 0, 1), y.narrow(0, 0, 1)), TensorDataset(x, y)};
}

}  // namespace

// Registered from the test binary, as a user's program would.
TRAINER_REGISTER_DATASET("tiny_test_dataset", tiny_dataset);

CATCH_TEST_CASE("fashion_mnist loads Debian's files with a seeded train/val split") {
  const DataSplits a = load_datasets(fashion());
  CATCH_CHECK(a.train->size() == 54000);
  CATCH_CHECK(a.val->size() == 6000);
  CATCH_CHECK(a.test->size() == 10000);
  CATCH_CHECK(as_tensors(*a.train).inputs().sizes().vec() == std::vector<int64_t>{54000, 1, 28, 28});
  CATCH_CHECK(as_tensors(*a.train).inputs().scalar_type() == at::kByte);
  CATCH_CHECK(as_tensors(*a.train).targets().scalar_type() == at::kLong);
  CATCH_CHECK(as_tensors(*a.test).inputs().sizes().vec() == std::vector<int64_t>{10000, 1, 28, 28});
  // The two splits partition the 60000 training images: every class still has 6000 images.
  const at::Tensor counts =
      as_tensors(*a.train).targets().bincount({}, 10) + as_tensors(*a.val).targets().bincount({}, 10);
  CATCH_CHECK(at::equal(counts, at::full({10}, 6000, at::kLong)));
  // A random split, not the first or last 6000: classes are about evenly represented in val.
  const at::Tensor val_counts = as_tensors(*a.val).targets().bincount({}, 10);
  CATCH_CHECK(val_counts.min().item<int64_t>() > 500);
  CATCH_CHECK(val_counts.max().item<int64_t>() < 700);

  // Same seed, same split; another seed, another split; both keep the pixel total.
  const DataSplits b = load_datasets(fashion());
  CATCH_CHECK(at::equal(as_tensors(*a.val).inputs(), as_tensors(*b.val).inputs()));
  CATCH_CHECK(at::equal(as_tensors(*a.train).targets(), as_tensors(*b.train).targets()));
  const DataSplits c = load_datasets(fashion(0.1, 7));
  CATCH_CHECK(!at::equal(as_tensors(*a.val).inputs(), as_tensors(*c.val).inputs()));
  const auto pixel_sum = [](const DataSplits& s) {
    return as_tensors(*s.train).inputs().sum(at::kLong).item<int64_t>() +
           as_tensors(*s.val).inputs().sum(at::kLong).item<int64_t>();
  };
  CATCH_CHECK(pixel_sum(a) == pixel_sum(c));
}

CATCH_TEST_CASE("fashion_mnist with val_fraction 0 has an empty validation set") {
  const DataSplits s = load_datasets(fashion(0.0));
  CATCH_CHECK(s.train->size() == 60000);
  CATCH_CHECK(s.val->size() == 0);
  CATCH_CHECK(as_tensors(*s.train).targets()[0].item<int64_t>() == 9);  // file order kept
}

CATCH_TEST_CASE("fashion_mnist names the missing file and how to install it") {
  DataOptions o = fashion();
  o.root = "/nonexistent/fashion";
  const std::string text = error_text([&] { load_datasets(o); });
  CATCH_CHECK_THAT(text, Contains("/nonexistent/fashion/train-images-idx3-ubyte.gz"));
  CATCH_CHECK_THAT(text, Contains("apt-get install dataset-fashion-mnist"));
}

CATCH_TEST_CASE("synthetic data is seeded and its labels are learnable") {
  const DataSplits a = load_datasets(synthetic());
  CATCH_CHECK(a.train->size() + a.val->size() == 4096);
  CATCH_CHECK(a.val->size() == 410);
  CATCH_CHECK(a.test->size() == 512);
  CATCH_CHECK(as_tensors(*a.train).inputs().sizes().vec() == std::vector<int64_t>{3686, 1, 28, 28});
  CATCH_CHECK(as_tensors(*a.train).inputs().scalar_type() == at::kByte);
  CATCH_CHECK(as_tensors(*a.train).targets().min().item<int64_t>() == 0);
  CATCH_CHECK(as_tensors(*a.train).targets().max().item<int64_t>() == 9);
  CATCH_CHECK(at::equal(as_tensors(*a.train).inputs(), as_tensors(*load_datasets(synthetic()).train).inputs()));
  CATCH_CHECK(!at::equal(as_tensors(*a.train).inputs(), as_tensors(*load_datasets(synthetic(43)).train).inputs()));

  // Learnable: class means from the training split classify the held-out test split...
  CATCH_CHECK(nearest_mean_accuracy(as_tensors(*a.train), as_tensors(*a.test), 10) > 0.9);
  // ...while the same classifier is at chance when the training labels are shuffled.
  const TensorDataset shuffled(as_tensors(*a.train).inputs(), as_tensors(*a.train).targets().flip({0}));
  CATCH_CHECK(nearest_mean_accuracy(shuffled, as_tensors(*a.test), 10) < 0.3);
}

CATCH_TEST_CASE("synthetic data follows image_shape and num_classes") {
  DataOptions o = synthetic();
  o.image_shape = {3, 8, 6};
  o.num_classes = 4;
  o.num_samples = 100;
  o.val_fraction = 0.0;
  const DataSplits s = load_datasets(o);
  CATCH_CHECK(as_tensors(*s.train).inputs().sizes().vec() == std::vector<int64_t>{100, 3, 8, 6});
  CATCH_CHECK(s.val->size() == 0);
  CATCH_CHECK(s.test->size() == 12);
  CATCH_CHECK(as_tensors(*s.train).targets().max().item<int64_t>() == 3);
}

CATCH_TEST_CASE("the dataset registry lists built-ins and user datasets") {
  const auto names = DatasetRegistry::instance().names();
  CATCH_CHECK(names == std::vector<std::string>{"csv", "fashion_mnist", "image_folder", "synthetic", "tensors",
                                                "tiny_test_dataset", "webdataset"});
  DataOptions o;
  o.name = "tiny_test_dataset";
  o.num_samples = 5;
  CATCH_CHECK(load_datasets(o).train->size() == 5);
  o.name = "fashion_mnst";
  const std::string text = error_text([&] { load_datasets(o); });
  CATCH_CHECK_THAT(text, Contains("unknown dataset 'fashion_mnst'"));
  CATCH_CHECK_THAT(text, Contains("fashion_mnist, image_folder, synthetic, tensors, tiny_test_dataset"));
  CATCH_CHECK_THAT(text, Contains("Did you mean 'fashion_mnist'?"));
}

CATCH_TEST_CASE("DataOptions reads the shipped data configs") {
  // data.root is ${paths.data_dir}, as in lightning-hydra-template: compose the two.
  trainer::config::Node fashion_root = trainer::config::Node::map();
  fashion_root.set("data", load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/data/fashion_mnist.yaml").root);
  fashion_root.set("paths", load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/paths/default.yaml").root);
  const DataOptions f = DataOptions::from_config(ConfigView(fashion_root).sub("data"), 7);
  CATCH_CHECK(f.name == "fashion_mnist");
  CATCH_CHECK(f.root == "/usr/share/datasets/fashion-mnist");
  CATCH_CHECK(f.batch_size == 128);
  CATCH_CHECK(f.val_fraction == 0.1);
  CATCH_CHECK(f.num_workers == DataOptions::kAutoWorkers);  // num_workers: auto
  CATCH_CHECK(f.pin_memory);
  CATCH_CHECK(f.mean == std::vector<double>{0.2860});
  CATCH_CHECK(f.std == std::vector<double>{0.3530});
  CATCH_CHECK(f.random_crop_padding == 0);
  CATCH_CHECK(!f.horizontal_flip);
  CATCH_CHECK(f.seed == 7);

  const auto synthetic_yaml = load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/data/synthetic.yaml").root;
  const DataOptions s = DataOptions::from_config(ConfigView(synthetic_yaml), 1);
  CATCH_CHECK(s.name == "synthetic");
  CATCH_CHECK(s.num_samples == 4096);
  CATCH_CHECK(s.image_shape == std::vector<int64_t>{1, 28, 28});
  CATCH_CHECK(s.num_classes == 10);
  CATCH_CHECK(s.num_workers == 0);
  CATCH_CHECK(!s.pin_memory);
}

CATCH_TEST_CASE("DataOptions reads nested keys and rejects bad values with their origin") {
  const auto root = load_yaml_string(
                        "data:\n"
                        "  name: synthetic\n"
                        "  batch_size: 0\n"
                        "  normalize: {mean: 0.5, std: 0.25}\n"
                        "  augment: {random_crop_padding: 4, horizontal_flip: true}\n",
                        "configs/data/mine.yaml")
                        .root;
  const ConfigView data = ConfigView(root).sub("data");
  const std::string text = error_text([&] { DataOptions::from_config(data, 0); });
  CATCH_CHECK_THAT(text, Contains("data.batch_size (configs/data/mine.yaml:3)"));
  CATCH_CHECK_THAT(text, Contains("at least 1"));

  const auto good = load_yaml_string(
                        "name: synthetic\n"
                        "normalize: {mean: 0.5, std: 0.25}\n"
                        "augment: {random_crop_padding: 4, horizontal_flip: true}\n",
                        "x.yaml")
                        .root;
  const DataOptions o = DataOptions::from_config(ConfigView(good), 0);
  CATCH_CHECK(o.mean == std::vector<double>{0.5});
  CATCH_CHECK(o.std == std::vector<double>{0.25});
  CATCH_CHECK(o.random_crop_padding == 4);
  CATCH_CHECK(o.horizontal_flip);

  const auto unknown = load_yaml_string("name: cifar10\n", "configs/data/c.yaml").root;
  const std::string unknown_text = error_text([&] { DataOptions::from_config(ConfigView(unknown), 0); });
  CATCH_CHECK_THAT(unknown_text, Contains("configs/data/c.yaml:1"));
  CATCH_CHECK_THAT(unknown_text, Contains("unknown dataset 'cifar10'"));
  CATCH_CHECK_THAT(unknown_text, Contains("fashion_mnist, image_folder, synthetic"));
}
