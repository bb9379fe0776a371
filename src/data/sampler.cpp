#include "trainer/data/sampler.h"

#include <string>
#include <utility>

#include <ATen/ATen.h>

#include "trainer/util/error.h"
#include "trainer/util/seeded_random.h"

namespace trainer::data {

at::Tensor random_permutation(int64_t n, uint64_t seed) {
  at::Tensor perm = at::arange(n, at::kLong);
  int64_t* p = perm.data_ptr<int64_t>();
  SeededRandom rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(p[i], p[j]);
  }
  return perm;
}

EpochSampler::EpochSampler(int64_t dataset_size, bool shuffle, uint64_t seed, int rank, int world_size, bool drop_last)
    : dataset_size_(dataset_size),
      shuffle_(shuffle),
      seed_(seed),
      rank_(rank),
      world_size_(world_size),
      drop_last_(drop_last) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw Error("EpochSampler",
                "rank " + std::to_string(rank) + " is not in [0, world size " + std::to_string(world_size) + ")",
                "Check the distributed environment (RANK, WORLD_SIZE).");
  }
  if (dataset_size < 0) {
    throw Error("EpochSampler", "negative dataset size " + std::to_string(dataset_size));
  }
  num_samples_ = drop_last ? dataset_size / world_size : (dataset_size + world_size - 1) / world_size;
}

EpochSampler EpochSampler::uneven(int64_t dataset_size, int rank, int world_size) {
  EpochSampler sampler(dataset_size, /*shuffle=*/false, 0, rank, world_size);
  sampler.uneven_ = true;
  sampler.num_samples_ = dataset_size > rank ? (dataset_size - rank + world_size - 1) / world_size : 0;
  return sampler;
}

at::Tensor EpochSampler::indices() const {
  at::Tensor order =
      shuffle_ ? random_permutation(dataset_size_, mix_seed(seed_, epoch_)) : at::arange(dataset_size_, at::kLong);
  if (uneven_) return world_size_ == 1 ? order : order.slice(0, rank_, dataset_size_, world_size_).contiguous();
  const int64_t total = num_samples_ * world_size_;
  if (total < dataset_size_) {
    order = order.narrow(0, 0, total);
  } else if (total > dataset_size_ && dataset_size_ > 0) {
    // Pad by repeating from the start (possibly several times when world_size > dataset size),
    // so every rank runs the same number of steps.
    const int64_t repeats = (total + dataset_size_ - 1) / dataset_size_;
    order = order.repeat({repeats}).narrow(0, 0, total);
  }
  if (world_size_ == 1) return order;
  return order.slice(0, rank_, total, world_size_).contiguous();
}

}  // namespace trainer::data
