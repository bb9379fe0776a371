// data=webdataset: samples streamed from tar shards in WebDataset's layout (formats/tar_shard.h),
// never loaded whole. Each epoch reads the shards in an order drawn from (seed, epoch), cut at
// sample boundaries into one contiguous share per data-parallel rank, through a shuffle buffer of
// data.shuffle_buffer encoded samples; the loader's threads decode and transform them (images as
// data=image_folder does, .npy/.safetensors tensors as they are). Memory is bounded by the
// configuration: the shuffle buffer, the batches in flight, and one open shard per split.
//
// Every position of a rank's stream is a pure function of (seed, epoch, rank, the shards), so the
// batches do not depend on the number of loader threads, and a run resumed mid-epoch restarts
// the epoch's stream and reads (without decoding) up to where it stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "trainer/data/data_options.h"
#include "trainer/data/dataset.h"
#include "trainer/data/datasets.h"
#include "trainer/image/image_decoder.h"
#include "trainer/image/transform_pipeline.h"

namespace trainer::data {

// One split's shards as counted when opened: the readable samples of each.
struct ShardList {
  std::string key;  // the config key that lists them, for messages ("data.shards")
  std::vector<std::string> paths;
  std::vector<int64_t> samples;  // per shard, bad samples left out (data.on_bad_sample=skip)
  std::vector<int64_t> bytes;    // per shard, the file's size when it was listed
  std::vector<int64_t> digests;  // per shard, formats::shard_digest (-1: unknown)
  int64_t total = 0;
};

// Where a sample's label is read from: the integer text of its .cls member, or the key
// `json_key` of its .json member.
struct LabelSource {
  std::string json_key;  // empty: .cls
};

struct WebDatasetOptions {
  std::string split;  // "train", "val" or "test"
  bool training = false;
  uint64_t seed = 0;
  int64_t shuffle_buffer = 1000;  // samples; 0 or 1: the stream's order
  LabelSource label;
  bool labels_optional = false;  // trainer predict: a sample without a label gets -1
  bool tensors = false;          // inputs are .npy/.safetensors arrays, not images
  std::vector<int64_t> sample_shape;
  at::ScalarType dtype = at::kByte;
  int channels = 3;
  image::TransformPipeline transforms;
  image::DecodeRequest decode;
  bool skip_bad_samples = false;
  int64_t num_classes = 0;  // data.num_classes, or the training labels' largest + 1
};

class WebDataset : public Dataset {
 public:
  WebDataset(std::shared_ptr<const ShardList> shards, WebDatasetOptions options, int rank = 0, int world_size = 1);
  ~WebDataset() override;

  // This rank's samples per epoch (the whole split for rank 0 of 1).
  int64_t size() const override { return share_size_; }
  Batch get_batch(const at::Tensor& positions, int64_t epoch) const override;
  std::vector<int64_t> sample_shape() const override { return options_.sample_shape; }
  int64_t num_classes() const override { return options_.num_classes; }
  bool reads_files() const override { return true; }
  // Over this split and every rank share made from it.
  int64_t skipped_samples() const override;
  std::shared_ptr<const Dataset> rank_share(int rank, int world_size, bool training) const override;
  void begin_epoch(int64_t epoch, int64_t first_position) const override;

  const ShardList& shards() const { return *shards_; }
  // The training split's shards as a checkpoint keeps them, {"webdataset_shards": [[samples,
  // bytes, digest], ...]}: a resumed fit checks that it streams the same shards. Empty for val
  // and test.
  std::string encoding() const override;

 private:
  struct Stream;
  struct Encoded;
  struct Scratch;
  struct Skipped;
  WebDataset(std::shared_ptr<const ShardList> shards, WebDatasetOptions options, int rank, int world_size,
             std::shared_ptr<Skipped> skipped);
  // With mutex_ held: restarts the stream at `epoch`, read up to `first_position`.
  void restart(int64_t epoch, int64_t first_position) const;
  void read_next(Encoded& out) const;  // the share's next sample from the shards
  void produce(Encoded& out) const;    // the stream's next sample, through the shuffle buffer
  void take(int64_t position, int64_t epoch, Encoded& out) const;
  // Decodes `sample` into row `row` of `batch`; false for an undecodable sample when
  // data.on_bad_sample=skip (otherwise, and for a sample of the wrong kind or shape, throws).
  bool decode_into(Encoded& sample, int64_t epoch, int64_t position, Batch& batch, int64_t row, Scratch& scratch) const;

  std::shared_ptr<const ShardList> shards_;
  WebDatasetOptions options_;
  int rank_ = 0, world_size_ = 1;
  int64_t share_size_ = 0;
  int64_t share_start_ = 0;  // the share's first position in the epoch's order of every sample
  mutable std::mutex mutex_;
  std::unique_ptr<Stream> stream_;    // guarded by mutex_
  std::shared_ptr<Skipped> skipped_;  // shared with the rank shares
};

// The built-in "webdataset" factory: expands and counts data.shards, data.val_shards and
// data.test_shards (reading only their labels), takes the class count from the labels unless
// data.num_classes is set, and the sample shape from the transforms or the first sample.
DataSplits load_webdataset(const DataOptions& options);

}  // namespace trainer::data
