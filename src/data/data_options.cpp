#include "trainer/data/data_options.h"

#include <string>

#include "trainer/data/datasets.h"
#include "trainer/options/option_reader.h"
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
  if (!registry.contains(o.name)) throw registry.unknown(o.name, where(data, "name"));
  // Each dataset's own keys through its declarations (src/options/data_section.cpp); a registered
  // dataset of a program built on trainer gets the loader's keys and reads the rest itself.
  const options::OptionReader r(data, o.name, "data");
  r.get<std::string>("name");
  o.batch_size = r.get<int64_t>("batch_size");
  o.val_fraction = r.get<double>("val_fraction");
  if (r.word("num_workers") != "auto") o.num_workers = r.get<int>("num_workers");
  o.pin_memory = r.get<bool>("pin_memory");
  if (r.declares("root")) {  // image_folder's is mandatory; fashion_mnist's has a computed default
    o.root = o.name == "image_folder" ? r.get<std::string>("root") : r.get_or<std::string>("root", o.root);
  }
  const bool image_folder = o.name == "image_folder";
  if (image_folder) {
    o.channels = r.choice("channels") == "1" ? 1 : 3;
    o.image_size = r.get<std::optional<int>>("image_size").value_or(0);
    o.augment_preset = r.get<std::string>("augment");
    o.skip_bad_samples = r.get<std::string>("on_bad_sample") == "skip";
    o.mean = {0.5};
    o.std = {0.5};
  }
  if (r.declares("normalize") && r.given("normalize")) {
    const options::OptionReader normalize = r.sub("normalize");
    if (image_folder) {
      o.mean = normalize.get<std::vector<double>>("mean");
      o.std = normalize.get<std::vector<double>>("std");
      for (const char* key : {"mean", "std"}) {
        const size_t count = normalize.get<std::vector<double>>(key).size();
        if (count != 1 && count != static_cast<size_t>(o.channels)) {
          throw Error(where(data, std::string("normalize.") + key),
                      "gives " + std::to_string(count) + " values, but the images have " + std::to_string(o.channels) +
                          (o.channels == 1 ? " channel" : " channels") + " (data.channels)",
                      "Give one value per channel, or one value for all of them.");
        }
      }
    } else {
      o.mean = {normalize.get<double>("mean")};
      o.std = {normalize.get<double>("std")};
    }
  }
  if (!image_folder && r.declares("augment") && r.given("augment")) {
    const options::OptionReader augment = r.sub("augment");
    o.random_crop_padding = augment.get<int>("random_crop_padding");
    o.horizontal_flip = augment.get<bool>("horizontal_flip");
  }
  if (r.declares("num_samples")) {
    o.num_samples = r.get<int64_t>("num_samples");
    o.image_shape = r.get<std::vector<int64_t>>("image_shape");
    o.num_classes = r.get<int64_t>("num_classes");
  }
  return o;
}

}  // namespace trainer::data
