#include "trainer/data/image_folder_dataset.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include <ATen/ATen.h>

#include "trainer/data/datasets.h"
#include "trainer/image/decode_transformed.h"
#include "trainer/image/image_decoder.h"
#include "trainer/util/error.h"
#include "trainer/util/home_path.h"
#include "trainer/util/log.h"
#include "trainer/util/seeded_random.h"

namespace trainer::data {

struct ImageFolderDataset::Scratch {
  std::vector<uint8_t> file;  // the encoded bytes
  image::Image image;
  image::TransformScratch transform;
};

ImageFolderDataset::ImageFolderDataset(std::vector<std::string> files, std::vector<int64_t> labels,
                                       std::vector<std::string> classes, ImageFolderOptions options)
    : files_(std::move(files)), labels_(std::move(labels)), classes_(std::move(classes)), options_(std::move(options)) {
  if (files_.size() != labels_.size()) {
    throw Error("ImageFolderDataset",
                std::to_string(files_.size()) + " files but " + std::to_string(labels_.size()) + " labels");
  }
  if (options_.channels != 1 && options_.channels != 3) {
    throw Error("data.channels", "must be 1 or 3, got " + std::to_string(options_.channels));
  }
  options_.decode.channels = options_.channels;
}

ImageFolderDataset::~ImageFolderDataset() = default;

std::string ImageFolderDataset::sample_name(int64_t index) const {
  return std::filesystem::absolute(files_.at(static_cast<size_t>(index))).lexically_normal().string();
}

std::unique_ptr<ImageFolderDataset::Scratch> ImageFolderDataset::take_scratch() const {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!free_scratch_.empty()) {
      std::unique_ptr<Scratch> scratch = std::move(free_scratch_.back());
      free_scratch_.pop_back();
      return scratch;
    }
  }
  return std::make_unique<Scratch>();
}

void ImageFolderDataset::give_back(std::unique_ptr<Scratch> scratch) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  free_scratch_.push_back(std::move(scratch));
}

void ImageFolderDataset::note_skipped(const std::string& file, const std::string& why) const {
  skipped_.fetch_add(1);
  bool first = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    first = reported_.insert(file).second;
  }
  // Training and validation meet the file every epoch; a test or predict pass meets it once.
  const bool each_epoch = options_.split == "train" || options_.split == "val";
  if (first) {
    log::warning("data.on_bad_sample=skip: left out " + file + " (" + why + "); logged once" +
                 (each_epoch ? ", counted per epoch" : ""));
  }
}

Batch ImageFolderDataset::get_batch(const at::Tensor& indices, int64_t epoch) const {
  const at::Tensor order = indices.to(at::kLong).contiguous();
  const int64_t n = order.numel();
  const int64_t* index = order.data_ptr<int64_t>();
  const int64_t c = options_.channels, h = options_.height, w = options_.width;
  at::Tensor inputs = at::empty({n, c, h, w}, at::TensorOptions().dtype(at::kByte));
  at::Tensor targets = at::empty({n}, at::TensorOptions().dtype(at::kLong));
  uint8_t* out = inputs.data_ptr<uint8_t>();
  int64_t* label_out = targets.data_ptr<int64_t>();
  const auto plane = static_cast<size_t>(h * w);

  std::unique_ptr<Scratch> scratch = take_scratch();
  struct GiveBack {  // the scratch goes back to the pool also when a sample throws
    const ImageFolderDataset* dataset;
    std::unique_ptr<Scratch>& scratch;
    ~GiveBack() { dataset->give_back(std::move(scratch)); }
  } give_back_on_exit{this, scratch};

  std::vector<int64_t> kept_indices;
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t sample = index[i];
    if (sample < 0 || sample >= size()) {
      throw Error("ImageFolderDataset", "sample " + std::to_string(sample) + " is outside the " +
                                            std::to_string(size()) + " samples of the " + options_.split + " split");
    }
    const std::string& file = files_[static_cast<size_t>(sample)];
    image::Image& img = scratch->image;
    SeededRandom random(mix_seed(options_.seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(sample)));
    try {
      image::read_file(file, scratch->file);
      image::decode_transformed(scratch->file.data(), scratch->file.size(), options_.decode, options_.transforms,
                                random, scratch->transform, img, file);
    } catch (const image::BadImage& bad) {
      if (!options_.skip_bad_samples) {
        throw Error(bad.where(), bad.problem(),
                    (bad.fix().empty() ? std::string("Replace or remove the file.") : bad.fix()) +
                        " Or set data.on_bad_sample=skip to leave such images out (each named once, counted).");
      }
      note_skipped(file, bad.problem());
      continue;
    }
    if (img.height != h || img.width != w) {
      throw Error(file,
                  "is " + std::to_string(img.height) + "x" + std::to_string(img.width) + " after the transforms (" +
                      options_.transforms.describe() + "), but the batch holds " + std::to_string(h) + "x" +
                      std::to_string(w) + " images",
                  "Set data.image_size (e.g. data.image_size=" + std::to_string(std::max(h, w)) +
                      ") so that every image is resized and cropped to one size.");
    }
    image::copy_planar(img, out + static_cast<size_t>(kept) * static_cast<size_t>(c) * plane);
    label_out[kept] = labels_[static_cast<size_t>(sample)];
    kept_indices.push_back(sample);
    ++kept;
  }
  if (kept == n) return {inputs, targets};
  if (kept == 0) {
    throw Error("data.on_bad_sample",
                "every image of a batch of " + std::to_string(n) + " from the " + options_.split +
                    " split is unreadable (data.on_bad_sample=skip left none)",
                "Check the files under data.root (the warnings above name them), or use a larger data.batch_size.");
  }
  return {inputs.narrow(0, 0, kept), targets.narrow(0, 0, kept), at::tensor(kept_indices, at::kLong)};
}

namespace {

// The shrinking floor for JPEG's DCT-domain scaling: when the first step resizes, the decoder
// may hand over any size whose sides are still at least the resize's target.
image::DecodeRequest decode_request(const image::TransformPipeline& transforms, int channels) {
  image::DecodeRequest request;
  request.channels = channels;
  if (!transforms.empty() && transforms.steps().front().kind == image::TransformStep::Kind::kResize) {
    const image::TransformStep& resize = transforms.steps().front();
    request.min_height = resize.height;
    request.min_width = resize.width == 0 ? resize.height : resize.width;
  }
  return request;
}

std::shared_ptr<const Dataset> make_split(std::vector<std::string> files, std::vector<int64_t> labels,
                                          const std::vector<std::string>& classes, const DataOptions& options,
                                          bool training, int height, int width, const std::string& split) {
  ImageFolderOptions o;
  o.channels = options.channels;
  o.height = height;
  o.width = width;
  o.transforms = pipeline_for(options, training);
  o.decode = decode_request(o.transforms, options.channels);
  o.seed = options.seed;
  o.skip_bad_samples = options.skip_bad_samples;
  o.split = split;
  return std::make_shared<const ImageFolderDataset>(std::move(files), std::move(labels), classes, std::move(o));
}

// The part of `folder` at `indices` (sorted, int64).
std::pair<std::vector<std::string>, std::vector<int64_t>> pick(const image::ImageFolder& folder,
                                                               const at::Tensor& indices) {
  std::pair<std::vector<std::string>, std::vector<int64_t>> out;
  const at::Tensor order = indices.contiguous();
  const int64_t* index = order.data_ptr<int64_t>();
  for (int64_t i = 0; i < order.numel(); ++i) {
    out.first.push_back(folder.files[static_cast<size_t>(index[i])]);
    out.second.push_back(folder.labels[static_cast<size_t>(index[i])]);
  }
  return out;
}

std::string size_text(int height, int width) { return std::to_string(height) + " x " + std::to_string(width); }

// What brings a split's images to their size, for errors: its data.transforms key, and when that
// is null, what stands in for it ("data.transforms.eval (null: data.augment=none with
// data.image_size=null)").
std::string steps_source(const DataOptions& options, bool training) {
  const std::string key = training ? "data.transforms.train" : "data.transforms.eval";
  if (training ? options.train_transforms.has_value() : options.eval_transforms.has_value()) return key;
  return key + " (null: data.augment=" + options.augment_preset + " with data.image_size=" +
         (options.image_size > 0 ? std::to_string(options.image_size) : std::string("null")) + ")";
}

// The samples' size: the one the training (or else the evaluation) steps end at, else the size the
// steps give the first readable image (every image must then end at it; with on_bad_sample=skip
// an unreadable first file is passed over, as it will be in the batches). Training and evaluation must agree:
// the model takes one size. `with_training`: false for prediction, which uses the evaluation steps
// alone.
std::pair<int, int> sample_size(const DataOptions& options, const std::vector<std::string>& files,
                                bool with_training = true) {
  const std::optional<image::Size> train =
      with_training ? pipeline_for(options, true).output_size() : std::optional<image::Size>();
  const std::optional<image::Size> eval = pipeline_for(options, false).output_size();
  if (train && eval && (train->height != eval->height || train->width != eval->width)) {
    throw Error(steps_source(options, false),
                "brings evaluation images to " + size_text(eval->height, eval->width) + ", but " +
                    steps_source(options, true) + " brings training images to " +
                    size_text(train->height, train->width) + ": the model takes one size",
                "End both lists with steps of the same size (e.g. train [{random_resized_crop: 64}, "
                "horizontal_flip], eval [{resize: 73}, {center_crop: 64}]).");
  }
  if (!with_training && eval) return {eval->height, eval->width};
  image::DecodeRequest request;
  request.channels = options.channels;
  std::vector<uint8_t> buffer;
  image::Image first;
  for (const std::string& file : files) {
    if (train && eval) break;
    try {
      image::read_image(file, request, buffer, first);
      break;
    } catch (const image::BadImage& bad) {
      if (options.skip_bad_samples && &file != &files.back()) continue;
      throw Error(bad.where(), bad.problem(),
                  options.skip_bad_samples
                      ? "No image could be read (data.on_bad_sample=skip left none): check data.root."
                      : "data.image_size is null, so the first image gives every sample's size: fix or remove that "
                        "file, set data.on_bad_sample=skip, or set data.image_size.");
    }
  }
  // A list that fixes no size (a shorter-side resize, flips, jitter, or nothing) leaves the first
  // image at the size its steps give it (its own when it has none).
  const auto size_after = [&](bool training, const std::optional<image::Size>& fixed) {
    if (fixed) return *fixed;
    image::Image copy = first;
    SeededRandom random(0);
    image::TransformScratch scratch;
    pipeline_for(options, training).apply(copy, random, scratch);
    return image::Size{copy.height, copy.width};
  };
  const image::Size eval_size = size_after(false, eval);
  if (!with_training) return {eval_size.height, eval_size.width};
  const image::Size train_size = size_after(true, train);
  if (train_size.height != eval_size.height || train_size.width != eval_size.width) {
    // Named first: the list whose size follows the image (the other one fixes it).
    const bool unsized_training = !train.has_value();
    const image::Size fixed = unsized_training ? eval_size : train_size;
    const image::Size follows = unsized_training ? train_size : eval_size;
    throw Error(steps_source(options, unsized_training),
                "brings " + files.front() + " to " + size_text(follows.height, follows.width) + " (" +
                    pipeline_for(options, unsized_training).describe() + "), but " +
                    steps_source(options, !unsized_training) + " brings it to " + size_text(fixed.height, fixed.width) +
                    ": the model takes one size",
                fixed.height == fixed.width
                    ? "Set data.image_size=" + std::to_string(fixed.height) + ", or end data.transforms." +
                          (unsized_training ? "train" : "eval") +
                          " with a step of that size (e.g. center_crop: " + std::to_string(fixed.height) + ")."
                    : "Give data.transforms." + std::string(unsized_training ? "train" : "eval") + "=[{resize: [" +
                          std::to_string(fixed.height) + ", " + std::to_string(fixed.width) +
                          "]}] (data.image_size is a square's side).");
  }
  return {train_size.height, train_size.width};
}

// A hidden folder (Jupyter's .ipynb_checkpoints/, an editor's) is a class, as torchvision's
// ImageFolder makes it, which is rarely what its owner meant: said, with its image count.
void warn_of_hidden_classes(const image::ImageFolder& train) {
  for (size_t index = 0; index < train.classes.size(); ++index) {
    const std::string& name = train.classes[index];
    if (name.empty() || name[0] != '.') continue;
    const auto images = std::count(train.labels.begin(), train.labels.end(), static_cast<int64_t>(index));
    log::warning("data.root: the hidden folder '" + name + "' is a class, as in torchvision's ImageFolder: its " +
                 std::to_string(images) + " image" + (images == 1 ? "" : "s") + " train the model as class '" + name +
                 "' (Jupyter and editors leave such folders); delete it or move it out of " + train.root +
                 " if it is not a class");
  }
}

}  // namespace

image::TransformPipeline pipeline_for(const DataOptions& options, bool training) {
  const std::optional<TransformList>& given = training ? options.train_transforms : options.eval_transforms;
  if (given) return image::TransformPipeline(given->steps, training ? "data.transforms.train" : "data.transforms.eval");
  return image::TransformPipeline::preset(options.augment_preset, training, options.image_size, options.image_size,
                                          "data.augment");
}

DataSplits load_image_folder(const DataOptions& options) {
  if (options.root.empty()) {
    throw Error("data.root", "no image folder given",
                "Set data.root to a folder of class sub-folders: data.root=~/photos (root/<class>/<image>).");
  }
  const image::ImageFolderSplits scan = image::scan_image_folder_splits(expand_home(options.root), "data.root");
  const std::vector<std::string>& classes = scan.train.classes;
  warn_of_hidden_classes(scan.train);

  const auto [height, width] = sample_size(options, scan.train.files);
  log::info("image transforms: train " + pipeline_for(options, true).describe() + "; evaluation " +
            pipeline_for(options, false).describe() + "; samples " + std::to_string(options.channels) + " x " +
            size_text(height, width));
  std::shared_ptr<const Dataset> train, val, test;
  if (scan.split_layout && scan.val) {
    train = make_split(scan.train.files, scan.train.labels, classes, options, true, height, width, "train");
    val = make_split(scan.val->files, scan.val->labels, classes, options, false, height, width, "val");
  } else {
    const auto [train_indices, val_indices] =
        split_indices(static_cast<int64_t>(scan.train.files.size()), options.val_fraction, options.seed);
    auto [train_files, train_labels] = pick(scan.train, train_indices);
    auto [val_files, val_labels] = pick(scan.train, val_indices);
    train = make_split(std::move(train_files), std::move(train_labels), classes, options, true, height, width, "train");
    val = make_split(std::move(val_files), std::move(val_labels), classes, options, false, height, width, "val");
  }
  if (scan.test) {
    test = make_split(scan.test->files, scan.test->labels, classes, options, false, height, width, "test");
  } else {
    test = make_split({}, {}, classes, options, false, height, width, "test");
  }
  return DataSplits(std::move(train), std::move(val), std::move(test));
}

std::shared_ptr<const Dataset> load_images_to_predict(const DataOptions& options,
                                                      const std::vector<std::string>& classes) {
  if (options.root.empty()) {
    throw Error("data.root", "no folder of images to predict given",
                "Set data.root to the images: trainer predict ckpt_path=<checkpoint> data.root=<folder>.");
  }
  std::string root = expand_home(options.root);
  std::error_code error;
  if (std::filesystem::is_directory(root + "/train", error)) {  // the split layout: its test split
    if (!std::filesystem::is_directory(root + "/test", error)) {
      throw Error("data.root", root + " holds train/ but no test/ folder to predict on",
                  "Point data.root at the folder of images to predict, or add " + root + "/test.");
    }
    root += "/test";
  }
  std::vector<std::string> files = image::list_image_files(root, "data.root");
  std::vector<int64_t> labels;
  labels.reserve(files.size());
  std::vector<std::string> other_folders;  // first folders not named after a class
  bool any_class = false;
  for (const std::string& file : files) {
    // root/<first folder>/...: a class of the checkpoint's, when it is named after one.
    int64_t label = -1;
    const size_t start = root.size() + 1;
    const size_t slash = file.find('/', start);
    if (file.size() > start && slash != std::string::npos) {
      const std::string folder = file.substr(start, slash - start);
      const auto found = std::find(classes.begin(), classes.end(), folder);
      if (found != classes.end()) {
        label = found - classes.begin();
        any_class = true;
      } else if (std::find(other_folders.begin(), other_folders.end(), folder) == other_folders.end()) {
        other_folders.push_back(folder);
      }
    }
    labels.push_back(label);
  }
  // Laid out by class, with folders the model has no class for: their images are predicted
  // without a known class (left out of the accuracy), which a new class folder should not be silently.
  if (any_class && !other_folders.empty()) {
    std::string listed;
    for (size_t i = 0; i < other_folders.size() && i < 8; ++i) listed += (i == 0 ? "" : ", ") + other_folders[i];
    if (other_folders.size() > 8) listed += " and " + std::to_string(other_folders.size() - 8) + " more";
    log::warning("data.root: " + root + " holds folders that are not classes of the checkpoint (" + listed +
                 "): their images are predicted without a known class and left out of the accuracy; the model "
                 "can only answer with the classes it was trained on");
  }
  const auto [height, width] = sample_size(options, files, /*with_training=*/false);
  log::info("image transforms: " + pipeline_for(options, false).describe() + "; samples " +
            std::to_string(options.channels) + " x " + size_text(height, width));
  return make_split(std::move(files), std::move(labels), classes, options, false, height, width, "predict");
}

}  // namespace trainer::data
