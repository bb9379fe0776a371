#include "trainer/data/data_options.h"

#include <string>

#include "trainer/config/did_you_mean.h"
#include "trainer/data/datasets.h"
#include "trainer/util/error.h"

namespace trainer::data {
namespace {

// "data.batch_size (configs/data/fashion_mnist.yaml:4)": the key and where its value came from.
std::string where(const config::ConfigView& view, const std::string& key) {
  const std::string origin = view.node(key).origin().describe();
  return view.full_path(key) + (origin.empty() ? "" : " (" + origin + ")");
}

}  // namespace

DataOptions DataOptions::from_config(const config::ConfigView& data, uint64_t seed) {
  DataOptions o;
  o.seed = seed;
  o.section = data;
  o.name = data.get<std::string>("name");
  const DatasetRegistry& registry = DatasetRegistry::instance();
  if (!registry.contains(o.name)) {
    const auto known = registry.names();
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    std::string problem = "unknown dataset '" + o.name + "'; known datasets: " + list;
    const std::string hint = config::did_you_mean(o.name, known);
    if (!hint.empty()) problem += ". " + hint;
    throw Error(where(data, "name"), problem,
                "Pick one with data=<name> or register yours with TRAINER_REGISTER_DATASET.");
  }
  o.root = data.get_or<std::string>("root", o.root);
  o.batch_size = data.get_or<int64_t>("batch_size", o.batch_size);
  o.val_fraction = data.get_or<double>("val_fraction", o.val_fraction);
  const bool auto_workers = data.has("num_workers") && data.node("num_workers").is_string() &&
                            data.node("num_workers").as_string() == "auto";
  if (!auto_workers) o.num_workers = data.get_or<int>("num_workers", o.num_workers);
  o.pin_memory = data.get_or<bool>("pin_memory", o.pin_memory);
  o.mean = data.get_or<double>("normalize.mean", o.mean);
  o.std = data.get_or<double>("normalize.std", o.std);
  o.random_crop_padding = data.get_or<int>("augment.random_crop_padding", o.random_crop_padding);
  o.horizontal_flip = data.get_or<bool>("augment.horizontal_flip", o.horizontal_flip);
  o.num_samples = data.get_or<int64_t>("num_samples", o.num_samples);
  o.image_shape = data.get_or<std::vector<int64_t>>("image_shape", o.image_shape);
  o.num_classes = data.get_or<int64_t>("num_classes", o.num_classes);

  auto require = [&](bool ok, const std::string& key, const std::string& problem) {
    if (!ok) throw Error(where(data, key), problem, "Fix the value in the config or override it.");
  };
  require(o.batch_size >= 1, "batch_size", "must be at least 1");
  require(o.val_fraction >= 0.0 && o.val_fraction < 1.0, "val_fraction", "must be in [0, 1)");
  require(o.num_workers >= 0 || o.num_workers == DataOptions::kAutoWorkers, "num_workers",
          "must be auto or >= 0 (0 loads in the training thread)");
  if (data.has("normalize.std")) require(o.std > 0.0, "normalize.std", "must be positive");
  if (data.has("augment.random_crop_padding")) {
    require(o.random_crop_padding >= 0, "augment.random_crop_padding", "must be >= 0");
  }
  if (data.has("num_samples")) require(o.num_samples >= 1, "num_samples", "must be at least 1");
  if (data.has("num_classes")) require(o.num_classes >= 1, "num_classes", "must be at least 1");
  if (data.has("image_shape")) {
    bool positive = !o.image_shape.empty();
    for (int64_t d : o.image_shape) positive = positive && d >= 1;
    require(positive, "image_shape", "must be a non-empty list of sizes >= 1, like [1, 28, 28]");
  }
  return o;
}

}  // namespace trainer::data
