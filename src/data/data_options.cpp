#include "trainer/data/data_options.h"

#include <string>

#include "trainer/data/datasets.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"

namespace trainer::data {
namespace {

// "data.batch_size (configs/data/fashion_mnist.yaml:4)": the key and where its value came from.
std::string where(const config::ConfigView& view, const std::string& key) {
  return view.node(key).origin().describe_key(view.full_path(key));
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
  if (r.declares("val_fraction")) o.val_fraction = r.get<double>("val_fraction");
  if (r.word("num_workers") != "auto") o.num_workers = r.get<int>("num_workers");
  o.pin_memory = r.get<bool>("pin_memory");
  if (r.declares("root")) {  // image_folder's is mandatory; fashion_mnist's has a computed default
    o.root = o.name == "image_folder" ? r.get<std::string>("root") : r.get_or<std::string>("root", o.root);
  }
  // Image files: image_folder's, and webdataset's samples (they share the image keys).
  const bool image_folder = o.name == "image_folder" || o.name == "webdataset";
  if (image_folder) {
    o.channels = r.choice("channels") == "1" ? 1 : 3;
    o.image_size = r.get<std::optional<int>>("image_size").value_or(0);
    o.augment_preset = r.get<std::string>("augment");
    o.skip_bad_samples = r.get<std::string>("on_bad_sample") == "skip";
    o.mean = {0.5};
    o.std = {0.5};
    if (r.declares("transforms") && r.given("transforms")) {
      const options::OptionReader transforms = r.sub("transforms");
      if (const config::Node* list = transforms.steps("train")) {
        o.train_transforms = parse_transform_list(*list, transforms.where("train"));
      }
      if (const config::Node* list = transforms.steps("eval")) {
        o.eval_transforms = parse_transform_list(*list, transforms.where("eval"));
      }
      if (o.train_transforms && o.eval_transforms && o.image_size > 0) {
        throw Error(where(data, "image_size"),
                    "data.image_size=" + std::to_string(o.image_size) +
                        " would do nothing: data.transforms.train and data.transforms.eval both say every step",
                    "Give the size in the lists' steps and set data.image_size=null.");
      }
      if (o.train_transforms && o.augment_preset != "none") {
        throw Error(where(data, "augment"),
                    "data.augment=" + o.augment_preset +
                        " and data.transforms.train both say how training images "
                        "are transformed",
                    "Give one: data.augment=none with data.transforms.train, or data.transforms.train=null.");
      }
    }
  }
  if (r.declares("normalize") && r.given("normalize")) {
    const options::OptionReader normalize = r.sub("normalize");
    if (image_folder) {
      o.mean = normalize.get<std::vector<double>>("mean");
      o.std = normalize.get<std::vector<double>>("std");
    } else {
      o.mean = {normalize.get<double>("mean")};
      o.std = {normalize.get<double>("std")};
    }
  }
  // A final normalize step of data.transforms takes the place of data.normalize, for every split
  // (the loader normalises them all alike): the two lists' must agree.
  const TransformList* with_normalize = nullptr;
  for (const auto* list : {&o.train_transforms, &o.eval_transforms}) {
    if (!*list || !(*list)->mean) continue;
    if (with_normalize != nullptr && (with_normalize->mean != (*list)->mean || with_normalize->std != (*list)->std)) {
      throw Error(where(data, "transforms"), "the train and eval lists normalise differently",
                  "The loader normalises every split alike: give the same normalize step (or one, in either list).");
    }
    with_normalize = &**list;
    o.mean = *(*list)->mean;
    o.std = *(*list)->std;
  }
  if (image_folder) {
    for (const auto& [key, values] : {std::pair{"mean", &o.mean}, std::pair{"std", &o.std}}) {
      const size_t count = values->size();
      if (count != 1 && count != static_cast<size_t>(o.channels)) {
        throw Error(
            with_normalize != nullptr ? where(data, "transforms") : where(data, std::string("normalize.") + key),
            (with_normalize != nullptr ? "the normalize step's " + std::string(key) + " gives " : "gives ") +
                std::to_string(count) + " values, but the images have " + std::to_string(o.channels) +
                (o.channels == 1 ? " channel" : " channels") + " (data.channels)",
            o.channels == 1 && count == 3
                ? "Give one value for the gray channel: data.normalize.mean=[0.449] data.normalize.std=[0.226] "
                  "(ImageNet's means of the three), or your data's own."
                : "Give one value per channel, or one value for all of them.");
      }
    }
  }
  if (!image_folder && r.declares("augment") && r.given("augment")) {
    const options::OptionReader augment = r.sub("augment");
    o.random_crop_padding = augment.get<int>("random_crop_padding");
    o.horizontal_flip = augment.get<bool>("horizontal_flip");
  }
  if (o.name == "tensors") {
    o.inputs = r.get<std::string>("inputs");
    o.targets = r.get<std::string>("targets");
    o.input_key = r.get<std::optional<std::string>>("input_key").value_or("");
    o.target_key = r.get<std::optional<std::string>>("target_key").value_or("");
    o.test_inputs = r.get<std::optional<std::string>>("test_inputs").value_or("");
    o.test_targets = r.get<std::optional<std::string>>("test_targets").value_or("");
    if (o.test_inputs.empty() && !o.test_targets.empty()) {
      throw Error(where(data, "test_targets"),
                  "the test split needs both data.test_inputs and data.test_targets; data.test_inputs is null",
                  "Give both files, or neither (no test split).");
    }
    // data.test_inputs alone is what trainer predict reads (the targets unknown); the other
    // commands need both (load_tensor_files).
    o.test_inputs_where = where(data, "test_inputs");
    o.num_classes = r.get<std::optional<int64_t>>("num_classes").value_or(0);
  }
  if (o.name == "webdataset") {
    // Left `???`, the training shards are missing: validate, test and predict on shards need only
    // the evaluated split's (load_webdataset says what is missing when a fit needs them).
    const config::Node* given_shards = data.node().find("shards");
    if (given_shards == nullptr || !given_shards->is_missing()) o.shards = r.texts("shards");
    if (o.shards.empty() && given_shards != nullptr && !given_shards->is_missing()) {
      throw Error(where(data, "shards"), "lists no shard",
                  "Give the training shards: \"data.shards='/data/train-{000000..000127}.tar'\" (both quotes on a "
                  "shell command line).");
    }
    o.val_shards = r.texts("val_shards");
    o.test_shards = r.texts("test_shards");
    o.shuffle_buffer = r.get<int64_t>("shuffle_buffer");
    o.label_key = r.get<std::optional<std::string>>("label_key").value_or("");
    o.num_classes = r.get<std::optional<int64_t>>("num_classes").value_or(0);
  }
  if (o.name == "csv") {
    o.path = r.get<std::string>("path");
    o.test_path = r.get<std::optional<std::string>>("test_path").value_or("");
    o.target = r.get<std::string>("target");
    const auto features = r.get<std::optional<std::vector<std::string>>>("features");
    if (features && features->empty()) {
      throw Error(where(data, "features"), "lists no column: a model needs at least one input",
                  "List the input columns, or set data.features=null for every column but the target (and a leading "
                  "row index).");
    }
    o.features = features.value_or(std::vector<std::string>{});
    o.categorical = r.get<std::vector<std::string>>("categorical");
    const std::string delimiter = r.get<std::optional<std::string>>("delimiter").value_or("");
    if (delimiter.size() > 1 && delimiter != "\\t") {
      throw Error(where(data, "delimiter"), "is '" + delimiter + "', but a delimiter is one character",
                  "Give one character: data.delimiter=';', or data.delimiter='\\t' for tabs (null: by the file's "
                  "extension).");
    }
    o.delimiter = delimiter.empty() ? 0 : delimiter == "\\t" ? '\t' : delimiter[0];
    if (o.delimiter == '"' || o.delimiter == '\n' || o.delimiter == '\r') {
      throw Error(where(data, "delimiter"), "cannot be a quote or a line break", "Give the character between cells.");
    }
    o.standardize = r.get<bool>("standardize");
    o.regression = r.get<std::string>("task") == "regression";
    o.num_classes = r.get<std::optional<int64_t>>("num_classes").value_or(0);
    if (o.regression && o.num_classes > 0) {
      throw Error(where(data, "num_classes"),
                  "is " + std::to_string(o.num_classes) + ", but data.task=regression predicts one number, not classes",
                  "Set data.num_classes=null, or data.task=classification for class labels.");
    }
    o.mean = {0.0};  // the features are standardised (or not) when the table is read
    o.std = {1.0};
  }
  if (r.declares("num_samples")) {
    o.num_samples = r.get<int64_t>("num_samples");
    o.image_shape = r.get<std::vector<int64_t>>("image_shape");
    o.num_classes = r.get<int64_t>("num_classes");
  }
  return o;
}

}  // namespace trainer::data
