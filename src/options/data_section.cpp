#include "trainer/options/sections.h"

namespace trainer::options {

namespace {

// The keys every built-in dataset shares.
std::vector<Option> loader_options(
    const std::string& workers, const std::string& pin_memory, const std::string& batch_size = "128",
    const std::string& auto_workers = "auto: min(4 x GPUs, cores) on CUDA, none on CPU") {
  return {
      text("name", "???").means("the registered dataset"),
      integer("batch_size", batch_size).at_least(1).means("samples per batch"),
      number("val_fraction", "0.1")
          .at_least(0)
          .below(1)
          .means("the share of the training split held out for validation"),
      integer("num_workers", workers)
          .at_least(0)
          .or_words({"auto"})
          .means("loader threads (" + auto_workers + "; 0: in the training thread)"),
      flag("pin_memory", pin_memory).means("page-locked host batches for CUDA copies"),
  };
}

}  // namespace

// The built-in datasets (configs/data/). A dataset registered by a program built on trainer has
// no declaration here, and its section is not checked.
std::vector<Section> data_sections() {
  // Every dataset's batches are normalised and augmented by the loader (batch_loader.cpp).
  Section normalize{
      "data.normalize", "", true, "pixel normalisation of every dataset's batches, on the [0, 1] scale", {}};
  normalize.options = {
      number("mean", "0.2860").means("subtracted from each pixel"),
      number("std", "0.3530").above(0).means("each pixel is divided by it"),
  };
  Section augment{"data.augment", "", true, "augmentation of every dataset's training batches", {}};
  augment.options = {
      integer("random_crop_padding", "0").at_least(0).means("pad by N and crop back at a random offset (0: off)"),
      flag("horizontal_flip", "false").means("flip half the images left to right"),
  };
  Section fashion{"data", "fashion_mnist", true, "data=fashion_mnist: the real Fashion-MNIST (gzipped IDX files)", {}};
  fashion.options = loader_options("auto", "true");
  fashion.options.front().default_text = "fashion_mnist";
  fashion.options.push_back(
      text("root", "${paths.data_dir}")
          .a_path()
          .computed()
          .means("the directory of the four IDX files (default paths.data_dir: Debian's dataset-fashion-mnist)"));
  fashion.options.push_back(section("normalize").means("per-pixel normalisation, below"));
  fashion.options.push_back(section("augment").means("training-batch augmentation, below"));

  // data=image_folder: image files in class folders (src/data/image_folder_dataset.cpp).
  Section folder{"data",
                 "image_folder",
                 true,
                 "data=image_folder: images in class folders, read as torchvision's ImageFolder reads them",
                 {}};
  folder.options = loader_options("auto", "true", "64",
                                  "auto: this process's share of the cores, which decode, at most 4 x GPUs on CUDA");
  folder.options.front().default_text = "image_folder";
  folder.options.insert(
      folder.options.end(),
      {
          text("root", "???")
              .a_path()
              .means("root/<class>/**/<image>, or root/train, root/val, root/test holding such folders"),
          choice("channels", "3", {"1", "3"}).means("1 (gray) or 3 (RGB): every image is converted to it"),
          integer("image_size", "null")
              .at_least(1)
              .or_null()
              .means("the square side the transforms bring images to (null: the images' own, all the same size)"),
          choice("augment", "none", {"none", "imagenet"})
              .means("none: resize + center crop; imagenet: random resized crop + flip for training"),
          choice("on_bad_sample", "error", {"error", "skip"})
              .means("an unreadable image stops the run (error) or is logged once and left out (skip)"),
          section("normalize").means("per-channel normalisation, below"),
          section("transforms").means("torchvision's transforms by name, per split, below"),
      });
  Section folder_normalize{
      "data.normalize", "image_folder", true, "data=image_folder: per-channel normalisation, on the [0, 1] scale", {}};
  folder_normalize.options = {
      numbers("mean", "[0.485, 0.456, 0.406]").means("subtracted per channel (one value, or one per channel)"),
      numbers("std", "[0.229, 0.224, 0.225]").above(0).means("divides per channel (one value, or one per channel)"),
  };

  Section folder_transforms{"data.transforms",
                            "image_folder",
                            true,
                            "data=image_folder: torchvision's transforms by name (docs/data.md), in place of "
                            "data.augment's",
                            {}};
  folder_transforms.options = {
      steps("train", "null")
          .or_null()
          .means("training images' steps, e.g. [{random_crop: {size: 28, padding: 4}}, "
                 "horizontal_flip]; null: data.augment's"),
      steps("eval", "null")
          .or_null()
          .means("validation, test and predict images' steps, e.g. [{resize: 32}, "
                 "{center_crop: 28}]; null: data.augment's"),
  };

  // data=webdataset: tar shards streamed in WebDataset's layout (src/data/webdataset_dataset.cpp);
  // images as data=image_folder's, so its image keys too. No val_fraction: val has shards of its own.
  Section shards{
      "data", "webdataset", true, "data=webdataset: samples streamed from tar shards (WebDataset's layout)", {}};
  shards.options = loader_options("auto", "true", "64",
                                  "auto: this process's share of the cores, which decode, at most 4 x GPUs on CUDA");
  shards.options.front().default_text = "webdataset";
  shards.options.erase(shards.options.begin() + 2);  // val_fraction
  shards.options.insert(
      shards.options.end(),
      {
          texts("shards", "???")
              .a_path()
              .or_one_text()
              .means("the training shards: a path, a brace pattern (train-{000000..000127}.tar) or a list of them"),
          texts("val_shards", "null")
              .a_path()
              .or_null()
              .or_one_text()
              .means("the validation shards (null: no validation)"),
          texts("test_shards", "null")
              .a_path()
              .or_null()
              .or_one_text()
              .means("the test shards, also what trainer predict reads (null: no test split)"),
          integer("shuffle_buffer", "1000")
              .at_least(0)
              .means("training samples held, encoded, to draw each next one from at random (0: the shards' order)"),
          text("label_key", "null")
              .or_null()
              .means("a sample's label: its .cls member (null), or this key of its .json member"),
          integer("num_classes", "null").at_least(1).or_null().means("label classes (null: the largest label + 1)"),
      });
  for (const Option& image_key : folder.options) {
    if (image_key.key == "channels" || image_key.key == "image_size" || image_key.key == "augment" ||
        image_key.key == "on_bad_sample" || image_key.key == "normalize" || image_key.key == "transforms") {
      shards.options.push_back(image_key);
    }
  }
  Section shards_normalize = folder_normalize;
  shards_normalize.variant = "webdataset";
  shards_normalize.about = "data=webdataset: per-channel normalisation, on the [0, 1] scale";
  Section shards_transforms = folder_transforms;
  shards_transforms.variant = "webdataset";
  shards_transforms.about =
      "data=webdataset: torchvision's transforms by name (docs/data.md), in place of data.augment's";

  const std::vector<Option> shape = {
      integer("num_samples", "4096").at_least(1).means("training + validation samples"),
      integers("image_shape", "[1, 28, 28]").at_least(1).means("each sample's shape"),
      integer("num_classes", "10").at_least(1).means("label classes"),
  };
  Section synthetic{
      "data", "synthetic", true, "data=synthetic: random images and labels, for tests and benchmarks", {}};
  synthetic.options = loader_options("0", "false");
  synthetic.options.front().default_text = "synthetic";
  synthetic.options.insert(synthetic.options.end(), shape.begin(), shape.end());
  synthetic.options.push_back(section("normalize").means("per-pixel normalisation, below"));
  synthetic.options.push_back(section("augment").means("training-batch augmentation, below"));

  // data=tensors: arrays saved from Python, memory-mapped (src/data/tensor_files.cpp).
  Section tensors{
      "data", "tensors", true, "data=tensors: arrays saved from Python (.npy or safetensors files), memory-mapped", {}};
  tensors.options = loader_options("0", "true", "128", "auto: min(4 x GPUs, cores) on CUDA, none on CPU");
  tensors.options.front().default_text = "tensors";
  tensors.options.insert(
      tensors.options.end(),
      {
          text("inputs", "???").a_path().means("a .npy or .safetensors file: the samples along its first dimension"),
          text("targets", "???").a_path().means("a .npy or .safetensors file: one integer class index per sample"),
          text("input_key", "null").or_null().means("the inputs' tensor in a safetensors file (null: its only one)"),
          text("target_key", "null").or_null().means("the targets' tensor in a safetensors file (null: its only one)"),
          text("test_inputs", "null").a_path().or_null().means("the test split's inputs (null: no test split)"),
          text("test_targets", "null").a_path().or_null().means("the test split's targets, with test_inputs"),
          integer("num_classes", "null").at_least(1).or_null().means("label classes (null: the largest target + 1)"),
          section("normalize").means("(x - mean) / std per value; uint8 inputs first scaled to [0, 1]"),
      });
  Section tensors_normalize{
      "data.normalize", "tensors", true, "data=tensors: normalisation of the inputs, on their own scale", {}};
  tensors_normalize.options = {
      number("mean", "0").means("subtracted from each value (uint8: after dividing by 255)"),
      number("std", "1").above(0).means("each value is divided by it"),
  };

  // data=csv: a table with a header row (src/data/csv_dataset.cpp).
  Section csv{"data", "csv", true, "data=csv: a CSV or TSV table with a header row, one sample per row", {}};
  csv.options = loader_options("0", "true", "128", "auto: min(4 x GPUs, cores) on CUDA, none on CPU");
  csv.options.front().default_text = "csv";
  csv.options.insert(
      csv.options.end(),
      {
          text("path", "???").a_path().means("the table of the train and val rows (.csv; .tsv/.tab: tab-separated)"),
          text("test_path", "null")
              .a_path()
              .or_null()
              .means("the test split's table, with the same columns (null: none)"),
          text("target", "???").means("the label column: class indices or names, or numbers to regress"),
          choice("task", "classification", {"classification", "regression"})
              .means("classification (cross-entropy; acc) or regression (MSE; mae, rmse, r2)"),
          texts("features", "null")
              .or_null()
              .means("the input columns, in order (null: every column but the target and a leading row index)"),
          texts("categorical", "[]").means("input columns holding categories, one-hot encoded"),
          text("delimiter", "null").or_null().means("the character between cells, '\\t' for tabs (null: by extension)"),
          flag("standardize", "true")
              .means("numeric inputs (and a regression's target) to zero mean and unit variance, with the train "
                     "split's statistics"),
          integer("num_classes", "null")
              .at_least(1)
              .or_null()
              .means("label classes (null: the class names' count, or the largest index + 1)"),
      });

  // A dataset registered by a program built on trainer: the keys DataOptions hands it; the
  // section stays open for the dataset's own keys (DataOptions::section).
  Section registered{"data", "*", false, "data=<a registered dataset>: the keys DataOptions reads for it", {}};
  registered.options = loader_options("0", "false");
  registered.options.insert(registered.options.end(), shape.begin(), shape.end());
  registered.options.push_back(section("normalize").means("per-pixel normalisation, below"));
  registered.options.push_back(section("augment").means("training-batch augmentation, below"));
  return {fashion,
          folder,
          synthetic,
          tensors,
          csv,
          shards,
          registered,
          folder_normalize,
          folder_transforms,
          shards_normalize,
          shards_transforms,
          tensors_normalize,
          normalize,
          augment};
}

}  // namespace trainer::options
