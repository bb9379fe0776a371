// Turns a Dataset and an EpochSampler into ready-to-use batches: worker threads make batches (an
// index_select for tensors in memory; reading, decoding and transforming each sample for image
// files), move them to the device (pinned, non-blocking on CUDA), augment and normalise them
// there, and hand them over in order through a bounded queue. The batches are the same, in the
// same order, whatever the number of workers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "trainer/data/data_options.h"
#include "trainer/data/dataset.h"
#include "trainer/data/loader_timing.h"
#include "trainer/data/sampler.h"

namespace trainer::data {

struct LoaderOptions {
  int64_t batch_size = 128;
  // 0: batches are made in the thread that calls next(); -1 (auto): see resolve_num_workers.
  int num_workers = 2;
  int prefetch_batches = 4;  // batches made ahead of the consumer (bounds memory)
  bool drop_last = false;    // drop a last, smaller batch
  bool pin_memory = false;   // pin host batches before copying them to a CUDA device
  at::Device device = at::kCPU;
  // float (x/255 - mean)/std for uint8 inputs (pixels), float (x - mean)/std for any other dtype;
  // false: inputs keep their dtype
  bool normalize = true;
  // One value for every channel, or one per channel (inputs [N, C, ...] with C of them).
  std::vector<double> mean{0}, std{1};
  int crop_padding = 0;  // augmentation (batch_transform.h); 0 and false: none
  bool flip = false;
  uint64_t seed = 0;  // augmentation seed; each batch's generator is seeded from
                      // (seed, epoch, batch number), so thread timing cannot matter
};

// What num_workers=auto (-1) means; other values are returned as they are. For tensors in memory:
// min(4 x GPUs, cores) on a CUDA device, none on a CPU (the step's threads use every core and a
// batch is one gather). For a dataset that reads files: this process's share of the cores
// (at::get_num_threads(), which data parallel ranks on one machine divide), at most 4 x GPUs on
// CUDA. Loader threads on a CPU device run at idle priority.
int resolve_num_workers(int num_workers, const at::Device& device, bool reads_files = false);

// LoaderOptions from the data options: `training` turns augmentation on (when configured);
// evaluation loaders never augment.
LoaderOptions make_loader_options(const DataOptions& data, at::Device device, bool training);

// Told about each host-to-device copy made on the thread that calls next() (num_workers=0 on a
// CUDA device), so the trainer's profiler can time it as a phase of its own. Copies made in
// worker threads overlap training and are not reported.
class CopyObserver {
 public:
  virtual ~CopyObserver() = default;
  virtual void copy_started() = 0;
  virtual void copy_finished() = 0;
};

class BatchLoader {
 public:
  BatchLoader(std::shared_ptr<const Dataset> dataset, EpochSampler sampler, LoaderOptions options);
  ~BatchLoader();  // stops and joins the workers
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // Begins `epoch` (the sampler's order for it) at batch `skip_batches`, so a run resumed
  // mid-epoch sees exactly the batches it had not yet seen. Stops an unfinished epoch first.
  void start_epoch(int64_t epoch, int64_t skip_batches = 0);
  // The next batch, or nullopt at the end of the epoch. Rethrows a worker's exception.
  std::optional<Batch> next();

  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  int64_t batches_left() const { return batches_per_epoch_ - next_batch_; }
  const LoaderOptions& options() const { return options_; }
  // Null (the default): no calls. The observer must outlive the loader's use of it.
  void observe_copies(CopyObserver* observer) { copy_observer_ = observer; }
  // This epoch's waits and making rate so far (loader_timing.h). Call from the consumer thread.
  LoaderTiming epoch_timing();

 private:
  struct Slot {
    int64_t batch = -1;  // which batch the slot holds; -1: empty
    std::optional<Batch> value;
    std::exception_ptr error;
  };

  void check_normalization();  // and makes shift_ / scale_ for per-channel values
  // `observer`: told about the copy to the device (null in worker threads).
  Batch make_batch(int64_t batch_number, CopyObserver* observer) const;
  void worker_loop();
  void stop_workers();

  std::shared_ptr<const Dataset> dataset_;
  at::Tensor shift_, scale_;  // per-channel normalisation, [1, C, 1...] (undefined: one value)
  at::Tensor value_scale_;    // 1 / std per channel: scale_ for inputs that are not uint8 pixels
  EpochSampler sampler_;
  LoaderOptions options_;
  int64_t batches_per_epoch_ = 0;

  // Per epoch: set by start_epoch before workers start, read-only while they run.
  at::Tensor indices_;
  int64_t epoch_ = 0;
  int64_t next_batch_ = 0;        // the consumer's position (only the consumer thread writes it)
  int64_t first_batch_ = 0;       // the epoch's first batch (after a resume's skip): not timed
  LoaderTiming consumer_timing_;  // the consumer's waits (and its making, with no workers)
  bool started_ = false;
  CopyObserver* copy_observer_ = nullptr;

  // Shared with the workers, guarded by mutex_. Batch b lives in slots_[b % slots_.size()]
  // and may be made only while b < delivered_ + slots_.size(): the bounded queue.
  std::mutex mutex_;
  std::condition_variable ready_;  // a slot was filled
  std::condition_variable space_;  // the consumer took a batch, or stop
  std::vector<Slot> slots_;
  int64_t next_claim_ = 0;             // the next batch number a worker takes
  int64_t delivered_ = 0;              // batches handed to the consumer
  double workers_making_seconds_ = 0;  // summed over the workers, this epoch
  int64_t workers_samples_made_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace trainer::data
