// BatchLoader: the same batches in the same order for any number of workers, augmentation
// independent of thread timing, exact mid-epoch resume, epoch boundaries, errors, and the timing
// of the consumer's waits (the data-bound warning's figures). A hidden benchmark ([.bench])
// measures samples/s over Fashion-MNIST with 0, 1 and 2 workers.
#include "trainer/data/batch_loader.h"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#define CATCH_CONFIG_PREFIX_ALL
#include <catch2/catch.hpp>

#include "trainer/data/batch_transform.h"
#include "trainer/data/datasets.h"
#include "trainer/util/error.h"

using trainer::data::Batch;
using trainer::data::BatchLoader;
using trainer::data::DataOptions;
using trainer::data::EpochSampler;
using trainer::data::LoaderOptions;
using trainer::data::TensorDataset;

namespace {

std::shared_ptr<const trainer::data::Dataset> synthetic_train(int64_t samples = 1000) {
  DataOptions o;
  o.name = "synthetic";
  o.num_samples = samples;
  o.val_fraction = 0.0;
  return trainer::data::load_datasets(o).train;
}

LoaderOptions options(int workers, bool augment = true) {
  LoaderOptions o;
  o.batch_size = 64;
  o.num_workers = workers;
  o.prefetch_batches = 3;
  o.mean = {0.5};
  o.std = {0.25};
  o.crop_padding = augment ? 3 : 0;
  o.flip = augment;
  o.seed = 17;
  return o;
}

std::vector<Batch> epoch(BatchLoader& loader, int64_t number, int64_t skip = 0) {
  loader.start_epoch(number, skip);
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

bool same(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!at::equal(a[i].inputs, b[i].inputs) || !at::equal(a[i].targets, b[i].targets)) {
      return false;
    }
  }
  return true;
}

}  // namespace

CATCH_TEST_CASE("BatchLoader yields the sampler's batches, normalised, ending with nullopt") {
  const auto data = synthetic_train();
  EpochSampler sampler(data->size(), true, 5);
  BatchLoader loader(data, sampler, options(2, /*augment=*/false));
  CATCH_CHECK(loader.batches_per_epoch() == 16);  // 1000 / 64, last batch of 40
  const auto batches = epoch(loader, 3);
  CATCH_REQUIRE(batches.size() == 16);
  CATCH_CHECK(loader.batches_left() == 0);
  CATCH_CHECK(!loader.next().has_value());
  CATCH_CHECK(batches.back().inputs.size(0) == 40);

  sampler.set_epoch(3);
  const at::Tensor order = sampler.indices();
  const Batch expected = data->get_batch(order.narrow(0, 64, 64), 3);
  CATCH_CHECK(at::equal(batches[1].targets, expected.targets));
  CATCH_CHECK(batches[1].inputs.scalar_type() == at::kFloat);
  CATCH_CHECK(at::allclose(batches[1].inputs, trainer::data::to_float_normalized(expected.inputs, 0.5, 0.25)));
  // Every sample exactly once per epoch.
  std::vector<at::Tensor> targets;
  for (const auto& b : batches) targets.push_back(b.targets);
  CATCH_CHECK(at::cat(targets).numel() == 1000);
}

CATCH_TEST_CASE("BatchLoader gives identical epochs for 0, 1 and 3 workers") {
  const auto data = synthetic_train();
  const EpochSampler sampler(data->size(), true, 5);
  BatchLoader inline_loader(data, sampler, options(0));
  BatchLoader one(data, sampler, options(1));
  BatchLoader three(data, sampler, options(3));
  for (int64_t e : {0, 1}) {
    const auto reference = epoch(inline_loader, e);
    CATCH_CHECK(reference.size() == 16);
    CATCH_CHECK(same(reference, epoch(one, e)));
    CATCH_CHECK(same(reference, epoch(three, e)));
  }
  // Augmentation really happened and changes between epochs.
  BatchLoader plain(data, sampler, options(0, false));
  CATCH_CHECK(!same(epoch(inline_loader, 0), epoch(plain, 0)));
  const auto e0 = epoch(three, 0);
  const auto e1 = epoch(three, 1);
  CATCH_CHECK(!at::equal(e0[0].targets, e1[0].targets));
  // Re-running an epoch gives the same augmented batches again (thread timing cannot matter).
  CATCH_CHECK(same(e0, epoch(three, 0)));
}

// Threads of this process whose scheduling policy (field 41 of /proc/self/task/TID/stat) is SCHED_IDLE.
int idle_policy_threads() {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream stat(std::string("/proc/self/task/") + entry->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
    std::string field;
    for (int i = 3; i <= 41 && fields >> field; ++i) {
      if (i == 41 && std::stoi(field) == SCHED_IDLE) ++count;
    }
  }
  closedir(dir);
  return count;
}

CATCH_TEST_CASE("num_workers auto: none on CPU; CPU workers run at idle priority, same batches") {
  // On CPU the training step's threads take every core: auto loads in the training thread.
  CATCH_CHECK(trainer::data::resolve_num_workers(-1, at::kCPU) == 0);
  CATCH_CHECK(trainer::data::resolve_num_workers(0, at::kCPU) == 0);
  CATCH_CHECK(trainer::data::resolve_num_workers(3, at::kCPU) == 3);

  const auto data = synthetic_train();
  const EpochSampler sampler(data->size(), true, 5);
  {  // destroyed (workers joined) before the threads are counted below
    BatchLoader inline_loader(data, sampler, options(0));
    BatchLoader automatic(data, sampler, options(-1));
    const auto reference = epoch(inline_loader, 0);
    CATCH_CHECK(same(reference, epoch(automatic, 0)));
  }
  CATCH_CHECK(idle_policy_threads() == 0);
  BatchLoader two(data, sampler, options(2));
  two.start_epoch(0);
  CATCH_REQUIRE(two.next().has_value());
  // Both workers set their policy first thing; the second may not have been scheduled yet.
  int idle = 0;
  for (int i = 0; i < 500 && (idle = idle_policy_threads()) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CATCH_CHECK(idle == 2);
}

CATCH_TEST_CASE("BatchLoader resumes mid-epoch exactly with skip_batches") {
  const auto data = synthetic_train();
  const EpochSampler sampler(data->size(), true, 5);
  for (int workers : {0, 2}) {
    BatchLoader loader(data, sampler, options(workers));
    const auto full = epoch(loader, 4);
    const auto resumed = epoch(loader, 4, 5);
    CATCH_REQUIRE(resumed.size() == full.size() - 5);
    CATCH_CHECK(same(resumed, std::vector<Batch>(full.begin() + 5, full.end())));
    loader.start_epoch(4, 16);
    CATCH_CHECK(loader.batches_left() == 0);
    CATCH_CHECK(!loader.next().has_value());
    CATCH_CHECK_THROWS_AS(loader.start_epoch(4, 17), trainer::Error);
  }
}

CATCH_TEST_CASE("BatchLoader can stop mid-epoch and start another") {
  const auto data = synthetic_train();
  const EpochSampler sampler(data->size(), true, 5);
  BatchLoader loader(data, sampler, options(2));
  loader.start_epoch(0);
  CATCH_REQUIRE(loader.next().has_value());
  CATCH_CHECK(loader.batches_left() == 15);
  const auto e1 = epoch(loader, 1);  // abandons epoch 0 with workers busy
  BatchLoader fresh(data, sampler, options(0));
  CATCH_CHECK(same(e1, epoch(fresh, 1)));
}

CATCH_TEST_CASE("BatchLoader drop_last, unnormalised batches and per-rank samplers") {
  const auto data = synthetic_train();
  LoaderOptions o = options(2, false);
  o.drop_last = true;
  o.normalize = false;
  BatchLoader loader(data, EpochSampler(data->size(), false, 0, 1, 2), o);
  CATCH_CHECK(loader.batches_per_epoch() == 7);  // 500 samples for rank 1 of 2
  const auto batches = epoch(loader, 0);
  CATCH_REQUIRE(batches.size() == 7);
  CATCH_CHECK(batches[0].inputs.scalar_type() == at::kByte);
  CATCH_CHECK(batches[0].targets[0].item<int64_t>() == trainer::data::as_tensors(*data).targets()[1].item<int64_t>());
  CATCH_CHECK(batches[6].inputs.size(0) == 64);
}

CATCH_TEST_CASE("BatchLoader rethrows a worker's error in the caller") {
  // Rows of shape [2] cannot be augmented ([N, C, H, W] expected): the worker's error must
  // reach the caller of next().
  const auto data = std::make_shared<const TensorDataset>(at::zeros({10, 2}, at::kByte), at::zeros({10}, at::kLong));
  CATCH_CHECK_THROWS_AS(BatchLoader(data, EpochSampler(11, false, 0), options(1)), trainer::Error);
  LoaderOptions o = options(1, false);
  o.crop_padding = 1;
  BatchLoader loader(data, EpochSampler(10, false, 0), o);
  loader.start_epoch(0);
  CATCH_CHECK_THROWS_AS(loader.next(), trainer::Error);
  BatchLoader not_started(data, EpochSampler(10, false, 0), options(0));
  CATCH_CHECK_THROWS_AS(not_started.next(), trainer::Error);
}

namespace {

// A dataset whose every batch takes `delay` to make, as a folder of large images would.
class SlowDataset : public trainer::data::Dataset {
 public:
  explicit SlowDataset(std::chrono::milliseconds delay) : delay_(delay) {}
  int64_t size() const override { return 40; }
  Batch get_batch(const at::Tensor& indices, int64_t /*epoch*/) const override {
    std::this_thread::sleep_for(delay_);
    return {at::zeros({indices.numel(), 1, 2, 2}, at::kByte), indices.clone()};
  }
  std::vector<int64_t> sample_shape() const override { return {1, 2, 2}; }

 private:
  std::chrono::milliseconds delay_;
};

}  // namespace

CATCH_TEST_CASE("BatchLoader times the consumer's waits and the making rate (the data-bound warning's figures)") {
  const auto slow = std::make_shared<const SlowDataset>(std::chrono::milliseconds(20));
  LoaderOptions o = options(0, false);
  o.batch_size = 4;  // 10 batches of 20 ms
  {                  // no workers: every batch but the first (the pipeline fill) is waited for, all of its making
    BatchLoader loader(slow, EpochSampler(40, false, 0), o);
    epoch(loader, 0);
    const trainer::data::LoaderTiming timing = loader.epoch_timing();
    CATCH_CHECK(timing.batches_timed == 9);
    CATCH_CHECK(timing.waited_seconds >= 9 * 0.020);
    CATCH_CHECK(timing.samples_made == 40);
    CATCH_CHECK(timing.samples_per_thread_second() <= 4 / 0.020);
    CATCH_CHECK(timing.samples_per_thread_second() > 4 / 0.200);
  }
  {  // two workers and a consumer slower than them: after the fill, batches are ready when asked
    o.num_workers = 2;
    BatchLoader loader(slow, EpochSampler(40, false, 0), o);
    loader.start_epoch(0);
    while (loader.next()) std::this_thread::sleep_for(std::chrono::milliseconds(40));
    const trainer::data::LoaderTiming timing = loader.epoch_timing();
    CATCH_CHECK(timing.batches_timed == 9);
    CATCH_CHECK(timing.waited_seconds < 9 * 0.020 / 2);
    CATCH_CHECK(timing.samples_made == 40);
    // The next epoch starts from zero.
    loader.start_epoch(1);
    CATCH_CHECK(loader.epoch_timing().samples_made == 0);
    CATCH_CHECK(loader.epoch_timing().waited_seconds == 0);
  }
}

CATCH_TEST_CASE("BatchLoader throughput on Fashion-MNIST", "[.bench]") {
  DataOptions d;
  d.name = "fashion_mnist";
  d.root = "/usr/share/datasets/fashion-mnist";
  d.val_fraction = 0.0;
  const auto train = trainer::data::load_datasets(d).train;
  for (bool augment : {false, true}) {
    for (int workers : {0, 1, 2}) {
      LoaderOptions o = trainer::data::make_loader_options(d, at::kCPU, true);
      o.num_workers = workers;
      o.crop_padding = augment ? 2 : 0;
      o.flip = augment;
      BatchLoader loader(train, EpochSampler(train->size(), true, 42), o);
      epoch(loader, 0);  // warm-up
      double best = 0;
      for (int64_t e = 1; e <= 3; ++e) {
        const auto start = std::chrono::steady_clock::now();
        loader.start_epoch(e);
        int64_t samples = 0;
        while (auto batch = loader.next()) samples += batch->inputs.size(0);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::max(best, static_cast<double>(samples) / seconds);
        CATCH_CHECK(samples == 60000);
      }
      std::printf("batch 128, normalize%s, %d workers: %.0f samples/s (best of 3 epochs)\n",
                  augment ? " + crop 2 + flip" : "", workers, best);
    }
  }
}
