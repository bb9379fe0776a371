// data=image_folder: image files in class folders, as torchvision's ImageFolder reads them
// (image/image_folder.h), decoded and transformed one sample at a time on the loader's threads
// and collated into uint8 [N, C, H, W] batches (the loader normalises them). Random transforms
// are seeded from (run seed, epoch, sample index), so batches do not depend on the number of
// workers and a run resumed mid-epoch sees the very same pixels.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "trainer/data/data_options.h"
#include "trainer/data/dataset.h"
#include "trainer/data/datasets.h"
#include "trainer/image/image_decoder.h"
#include "trainer/image/image_folder.h"
#include "trainer/image/transform_pipeline.h"

namespace trainer::data {

struct ImageFolderOptions {
  int channels = 3;                     // 1 or 3
  int height = 0, width = 0;            // every sample's size after the transforms
  image::TransformPipeline transforms;  // this split's (training augments, evaluation does not)
  image::DecodeRequest decode;          // channels, and JPEG's DCT-domain shrinking floor
  uint64_t seed = 0;
  bool skip_bad_samples = false;  // data.on_bad_sample=skip
  std::string split;              // "train", "val" or "test", for messages
};

class ImageFolderDataset : public Dataset {
 public:
  // The samples `files[i]` with labels `labels[i]` of the class list `classes`.
  ImageFolderDataset(std::vector<std::string> files, std::vector<int64_t> labels, std::vector<std::string> classes,
                     ImageFolderOptions options);
  ~ImageFolderDataset() override;

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  // Throws image::BadImage naming the file for an unreadable image (unless skipping), and
  // trainer::Error when a transformed image does not have the batch's size.
  Batch get_batch(const at::Tensor& indices, int64_t epoch) const override;
  std::vector<int64_t> sample_shape() const override { return {options_.channels, options_.height, options_.width}; }
  std::vector<std::string> class_names() const override { return classes_; }
  bool reads_files() const override { return true; }
  int64_t skipped_samples() const override { return skipped_.load(); }
  // The file's absolute path: predictions.csv names files that resolve from anywhere (a relative
  // data.root would give paths relative to where trainer ran, not to the CSV).
  std::string sample_name(int64_t index) const override;

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<int64_t>& labels() const { return labels_; }

 private:
  struct Scratch;
  std::unique_ptr<Scratch> take_scratch() const;
  void give_back(std::unique_ptr<Scratch> scratch) const;
  void note_skipped(const std::string& file, const std::string& why) const;

  std::vector<std::string> files_;
  std::vector<int64_t> labels_;
  std::vector<std::string> classes_;
  ImageFolderOptions options_;

  // Decode buffers and scratch images, one set per thread making a batch, reused.
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Scratch>> free_scratch_;
  mutable std::set<std::string> reported_;  // unreadable files already logged
  mutable std::atomic<int64_t> skipped_{0};
};

// A split's image steps: its data.transforms list when given, else data.augment's preset at
// data.image_size (image_folder and webdataset alike).
image::TransformPipeline pipeline_for(const DataOptions& options, bool training);

// The built-in "image_folder" factory: scans options.root (split layout or one folder split by
// val_fraction), builds each split's transforms from data.augment and data.image_size, and sizes
// the samples (the first training image's size when image_size is null).
DataSplits load_image_folder(const DataOptions& options);

// What `trainer predict` reads with data=image_folder: every image below data.root, nested or
// flat (root/test when the root has the train/val/test layout), with the evaluation transforms.
// A file whose first folder below that root is named after one of `classes` (the checkpoint's)
// gets that class as its label, any other file -1 (unknown).
std::shared_ptr<const Dataset> load_images_to_predict(const DataOptions& options,
                                                      const std::vector<std::string>& classes);

}  // namespace trainer::data
