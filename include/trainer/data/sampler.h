// Which samples each rank reads in an epoch, in which order: a permutation of the dataset drawn
// from (seed, epoch) — a new order every epoch, the same on every rank — then padded or cut to a
// multiple of the world size and dealt out round-robin, as PyTorch's DistributedSampler does.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "trainer/util/seeded_random.h"

namespace trainer::data {

// A uniformly random permutation of 0..n-1 (int64, CPU) that depends only on `seed`: our own
// generator and Fisher-Yates shuffle, so orders and splits survive a change of LibTorch version.
at::Tensor random_permutation(int64_t n, uint64_t seed);

// Per-epoch and per-batch seeds derived from the run's seed (util/seeded_random.h).
using trainer::mix_seed;

class EpochSampler {
 public:
  // Throws trainer::Error unless 0 <= rank < world_size and dataset_size >= 0.
  EpochSampler(int64_t dataset_size, bool shuffle, uint64_t seed, int rank = 0, int world_size = 1,
               bool drop_last = false);

  // For evaluation: every sample exactly once over all ranks, dealt round-robin with neither
  // padding nor dropping, so ranks may hold one sample more than others (a metric summed over the
  // ranks then counts each sample once).
  static EpochSampler uneven(int64_t dataset_size, int rank, int world_size);

  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // This rank's indices for the current epoch (int64, CPU, num_samples() long). Without
  // drop_last the permutation is padded by repeating its start; with it the tail is dropped.
  at::Tensor indices() const;
  int64_t num_samples() const { return num_samples_; }
  int64_t dataset_size() const { return dataset_size_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

 private:
  int64_t dataset_size_;
  bool shuffle_;
  uint64_t seed_;
  int rank_;
  int world_size_;
  bool drop_last_;
  bool uneven_ = false;
  int64_t epoch_ = 0;
  int64_t num_samples_;  // per rank
};

}  // namespace trainer::data
