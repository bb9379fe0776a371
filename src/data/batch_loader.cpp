#include "trainer/data/batch_loader.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include "trainer/data/batch_transform.h"
#include "trainer/util/error.h"
#include "trainer/util/usable_cores.h"

// LibTorch's CPU kernels parallelise through OpenMP (libgomp, which both supported LibTorch builds
// load). Declared weak so that a build without it still links and simply skips the call.
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace trainer::data {
namespace {

// A loader worker prepares small batches while the training thread's kernels use every core:
// if the worker's own kernels opened OpenMP teams too, each batch would wake extra threads that
// fight the training step for the same cores. One intra-op thread per worker, for this thread
// only (the OpenMP thread count is per thread; at::set_num_threads would change the process's).
void use_one_intra_op_thread_in_this_thread() {
  (void)at::get_num_threads();  // LibTorch's per-thread lazy set-up first, or it would undo ours
  if (omp_set_num_threads != nullptr) omp_set_num_threads(1);
}

// On a CPU device the training step's intra-op threads already use every core; a worker that
// takes a core mid-step stalls the whole OpenMP team at its next barrier. At SCHED_IDLE a worker
// runs only on cycles nothing else wants (the training thread waiting on a batch, serial parts of
// the step) and is preempted the moment a training thread wakes. With a few batches prefetched it
// still never makes the training thread wait. Lowering one's own policy needs no privilege; if it
// fails anyway, the worker just keeps the normal policy.
void yield_cores_to_training_in_this_thread() {
  sched_param param{};
  param.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
}

}  // namespace

// auto: min(4 x GPUs, cores) with CUDA. On CPU the training step's intra-op threads already use
// every core, and an in-memory batch is an index gather of ~0.1 ms: measured on 2 cores
// (bench/engine_bench.sh, BENCHMARKS.md), 2 workers made an MLP epoch 7.6 % slower than loading in
// the training thread, 1 worker 7.9 %; so auto is 0 there (min(4 x 0 GPUs, cores)).
// A dataset that decodes files is another matter: there the loader's threads do the real work
// and the step waits on them, so they get this process's share of the cores.
int resolve_num_workers(int num_workers, const at::Device& device, bool reads_files) {
  if (num_workers >= 0) return num_workers;
  if (reads_files) {
    const int share = std::max(1, std::min(usable_cores(), at::get_num_threads()));
    return device.is_cuda() ? std::min(4 * static_cast<int>(torch::cuda::device_count()), share) : share;
  }
  if (!device.is_cuda()) return 0;
  return std::min(4 * static_cast<int>(torch::cuda::device_count()), usable_cores());
}

LoaderOptions make_loader_options(const DataOptions& data, at::Device device, bool training) {
  LoaderOptions o;
  o.batch_size = data.batch_size;
  o.num_workers = data.num_workers;
  o.pin_memory = data.pin_memory && device.is_cuda();
  o.device = device;
  o.normalize = true;
  o.mean = data.mean;
  o.std = data.std;
  o.crop_padding = training ? data.random_crop_padding : 0;
  o.flip = training && data.horizontal_flip;
  o.seed = data.seed;
  return o;
}

BatchLoader::BatchLoader(std::shared_ptr<const Dataset> dataset, EpochSampler sampler, LoaderOptions options)
    : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(options) {
  if (!dataset_) throw Error("BatchLoader", "no dataset given");
  if (sampler_.dataset_size() != dataset_->size()) {
    throw Error("BatchLoader", "the sampler covers " + std::to_string(sampler_.dataset_size()) +
                                   " samples but the dataset holds " + std::to_string(dataset_->size()));
  }
  if (options_.batch_size < 1) {
    throw Error("data.batch_size", "must be at least 1, got " + std::to_string(options_.batch_size));
  }
  options_.num_workers = resolve_num_workers(options_.num_workers, options_.device, dataset_->reads_files());
  if (options_.normalize) check_normalization();
  if (options_.crop_padding < 0) {
    throw Error("data.augment.random_crop_padding", "must be >= 0, got " + std::to_string(options_.crop_padding));
  }
  const int64_t n = sampler_.num_samples();
  const int64_t bs = options_.batch_size;
  batches_per_epoch_ = options_.drop_last ? n / bs : (n + bs - 1) / bs;
  // At least one slot per worker, or workers would sit idle waiting for room.
  slots_.resize(static_cast<size_t>(std::max({1, options_.prefetch_batches, options_.num_workers})));
}

BatchLoader::~BatchLoader() { stop_workers(); }

void BatchLoader::check_normalization() {
  // One value stands for every channel, beside a list of the other (torchvision's Normalize
  // broadcasts it too).
  if (options_.mean.size() == 1 && options_.std.size() > 1) options_.mean.resize(options_.std.size(), options_.mean[0]);
  if (options_.std.size() == 1 && options_.mean.size() > 1) options_.std.resize(options_.mean.size(), options_.std[0]);
  const size_t channels = options_.mean.size();
  if (channels == 0 || options_.std.size() != channels) {
    throw Error("data.normalize",
                "mean gives " + std::to_string(options_.mean.size()) + " values and std " +
                    std::to_string(options_.std.size()) + ": they pair up channel by channel",
                "Give one value per channel to both, or one value to either (it stands for every channel).");
  }
  for (const double s : options_.std) {
    if (!(s > 0)) throw Error("data.normalize.std", "must be positive, got " + std::to_string(s));
  }
  if (channels == 1) return;
  const std::vector<int64_t> shape = dataset_->sample_shape();
  if (shape.empty() || shape[0] != static_cast<int64_t>(channels)) {
    std::string samples = "no channel dimension";
    if (!shape.empty()) {
      std::string dims;
      for (const int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      samples = std::to_string(shape[0]) + (shape[0] == 1 ? " channel" : " channels") + " (shape [" + dims + "])";
    }
    throw Error(
        "data.normalize",
        "mean and std give " + std::to_string(channels) + " values, one per channel, but the samples have " + samples,
        "Give " + (shape.empty() ? std::string("one value") : std::to_string(shape[0]) + " value(s)") +
            " to each, or one value for all channels (tensor samples, values rather than pixels, reach the "
            "model as they are with data.normalize.mean=[0] data.normalize.std=[1]).");
  }
  // [1, C, 1, ...]: broadcast over the batch and every position.
  std::vector<int64_t> view(shape.size() + 1, 1);
  view[1] = static_cast<int64_t>(channels);
  std::vector<float> shift, scale;
  for (size_t c = 0; c < channels; ++c) {
    shift.push_back(static_cast<float>(-options_.mean[c] / options_.std[c]));
    scale.push_back(static_cast<float>(1.0 / (255.0 * options_.std[c])));
  }
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  shift_ = at::tensor(shift, f32).view(view);
  scale_ = at::tensor(scale, f32).view(view);
  value_scale_ = scale_ * 255.0;
  if (options_.device.is_cuda()) {
    shift_ = shift_.to(options_.device);
    scale_ = scale_.to(options_.device);
    value_scale_ = value_scale_.to(options_.device);
  }
}

void BatchLoader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_.notify_all();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

void BatchLoader::start_epoch(int64_t epoch, int64_t skip_batches) {
  if (skip_batches < 0 || skip_batches > batches_per_epoch_) {
    throw Error("ckpt_path",
                "the checkpoint was written " + std::to_string(skip_batches) +
                    " batches into an epoch, but an epoch of this data has " + std::to_string(batches_per_epoch_) +
                    " batches: the data, data.batch_size or the number of processes changed since",
                "Resume with the data and settings the run was started with, or start a new run (another "
                "hydra.run.dir, no ckpt_path).");
  }
  stop_workers();
  sampler_.set_epoch(epoch);
  indices_ = sampler_.indices();
  dataset_->begin_epoch(epoch, std::min(skip_batches * options_.batch_size, sampler_.num_samples()));
  epoch_ = epoch;
  next_batch_ = skip_batches;
  first_batch_ = skip_batches;
  consumer_timing_ = LoaderTiming{};
  started_ = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& slot : slots_) slot = Slot{};
    next_claim_ = skip_batches;
    delivered_ = skip_batches;
    workers_making_seconds_ = 0;
    workers_samples_made_ = 0;
    stop_ = false;
  }
  const int64_t remaining = batches_per_epoch_ - skip_batches;
  const auto threads = static_cast<int>(std::min<int64_t>(options_.num_workers, remaining));
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

Batch BatchLoader::make_batch(int64_t batch_number, CopyObserver* observer) const {
  const int64_t start = batch_number * options_.batch_size;
  const int64_t count = std::min(options_.batch_size, indices_.size(0) - start);
  Batch batch = dataset_->get_batch(indices_.narrow(0, start, count), epoch_);
  batch.requested = count;
  // Tells the observer when the copy starts and ends; a null observer is told nothing.
  struct CopyReport {
    CopyObserver* observer;
    explicit CopyReport(CopyObserver* o) : observer(o) {
      if (observer != nullptr) observer->copy_started();
    }
    ~CopyReport() {
      if (observer != nullptr) observer->copy_finished();
    }
  };
  {  // the copy, reported to the observer (also when it throws: the phases stay paired)
    const CopyReport report(options_.device != batch.inputs.device() ? observer : nullptr);
    if (options_.device.is_cuda()) {
      // Copy uint8 images (4x less than float), asynchronously from pinned memory; augmenting
      // and normalising then run on the device, ordered after the copy on the same stream.
      if (options_.pin_memory) {
        batch.inputs = batch.inputs.pin_memory();
        batch.targets = batch.targets.pin_memory();
      }
      batch.inputs = batch.inputs.to(options_.device, batch.inputs.scalar_type(), true);
      batch.targets = batch.targets.to(options_.device, batch.targets.scalar_type(), true);
    } else if (options_.device != batch.inputs.device()) {
      batch.inputs = batch.inputs.to(options_.device);
      batch.targets = batch.targets.to(options_.device);
    }
  }
  if (options_.crop_padding > 0 || options_.flip) {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(
        mix_seed(options_.seed, static_cast<uint64_t>(epoch_), static_cast<uint64_t>(batch_number)));
    batch.inputs = augment(batch.inputs, options_.crop_padding, options_.flip, gen);
  }
  if (options_.normalize && batch.inputs.scalar_type() == at::kByte) {
    batch.inputs = shift_.defined() ? to_float_normalized(batch.inputs, shift_, scale_)
                                    : to_float_normalized(batch.inputs, options_.mean[0], options_.std[0]);
  } else if (options_.normalize) {
    // Values, not pixels (data=tensors' float or integer arrays): float32, then (x - mean) / std,
    // here, on the batch's device, after a copy in the file's own (often narrower) dtype.
    batch.inputs = batch.inputs.to(at::kFloat);
    if (shift_.defined()) {
      batch.inputs = at::addcmul(shift_, batch.inputs, value_scale_);
    } else if (options_.mean[0] != 0.0 || options_.std[0] != 1.0) {
      batch.inputs = (batch.inputs - options_.mean[0]) / options_.std[0];
    }
  }
  return batch;
}

void BatchLoader::worker_loop() {
  use_one_intra_op_thread_in_this_thread();
  if (!options_.device.is_cuda()) yield_cores_to_training_in_this_thread();
  const auto window = static_cast<int64_t>(slots_.size());
  while (true) {
    int64_t batch_number = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_.wait(lock,
                  [&] { return stop_ || next_claim_ >= batches_per_epoch_ || next_claim_ < delivered_ + window; });
      if (stop_ || next_claim_ >= batches_per_epoch_) return;
      batch_number = next_claim_++;
    }
    Slot slot;
    slot.batch = batch_number;
    const auto started = std::chrono::steady_clock::now();
    try {
      slot.value = make_batch(batch_number, nullptr);
    } catch (...) {
      slot.error = std::current_exception();
    }
    const std::chrono::duration<double> making = std::chrono::steady_clock::now() - started;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      workers_making_seconds_ += making.count();
      if (slot.value) workers_samples_made_ += slot.value->targets.size(0);
      slots_[static_cast<size_t>(batch_number % window)] = std::move(slot);
    }
    ready_.notify_all();
  }
}

std::optional<Batch> BatchLoader::next() {
  if (!started_) {
    throw Error("BatchLoader::next", "no epoch started", "Call start_epoch(epoch) first.");
  }
  if (next_batch_ >= batches_per_epoch_) return std::nullopt;
  const bool timed = next_batch_ != first_batch_;  // the first batch fills the pipeline
  if (timed) ++consumer_timing_.batches_timed;
  const auto started = std::chrono::steady_clock::now();
  if (workers_.empty()) {
    Batch batch = make_batch(next_batch_++, copy_observer_);
    const std::chrono::duration<double> making = std::chrono::steady_clock::now() - started;
    if (timed) consumer_timing_.waited_seconds += making.count();
    consumer_timing_.making_seconds += making.count();
    consumer_timing_.samples_made += batch.targets.size(0);
    return batch;
  }

  const auto window = static_cast<int64_t>(slots_.size());
  Slot slot;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& waiting = slots_[static_cast<size_t>(next_batch_ % window)];
    if (waiting.batch != next_batch_) {
      ready_.wait(lock, [&] { return waiting.batch == next_batch_; });
      const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
      if (timed) consumer_timing_.waited_seconds += waited.count();
    }
    slot = std::move(waiting);
    waiting = Slot{};
    delivered_ = ++next_batch_;
  }
  space_.notify_all();
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.value);
}

LoaderTiming BatchLoader::epoch_timing() {
  LoaderTiming timing = consumer_timing_;
  std::lock_guard<std::mutex> lock(mutex_);
  timing.making_seconds += workers_making_seconds_;
  timing.samples_made += workers_samples_made_;
  return timing;
}

}  // namespace trainer::data
