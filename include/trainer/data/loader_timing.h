// How long the training loop waited for batches over an epoch, and how fast the loader made
// them; and the one-time warning when the loop is data-bound (it waited more than a quarter of
// the epoch), naming data.num_workers and the measured rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainer::data {

struct LoaderTiming {
  // Seconds the consumer (the training thread) spent in next() without a batch to take: waiting
  // for a worker, or making the batch itself when there are no workers. The first batch of an
  // epoch is left out: the pipeline fills then whatever the loader's speed.
  double waited_seconds = 0;
  int64_t batches_timed = 0;  // batches whose waits waited_seconds counts
  // Seconds spent making batches (reading, decoding, transforming, collating), summed over the
  // threads that made them, and the samples they made.
  double making_seconds = 0;
  int64_t samples_made = 0;

  // Samples one thread makes per second (0 when nothing was timed).
  double samples_per_thread_second() const {
    return making_seconds > 0 ? static_cast<double>(samples_made) / making_seconds : 0;
  }
};

// The loop waited for data more than this share of an epoch: data-bound.
constexpr double kDataBoundShare = 0.25;
// Fewer batches than this say too little (a short epoch is mostly its first batch's wait).
constexpr int64_t kDataBoundMinBatches = 8;

// The warning for an epoch of `epoch_seconds` in which the loop waited `timing.waited_seconds`
// with `num_workers` loader threads (0: batches made on the training thread), or nullopt when the
// loop was not data-bound. `epoch` names the epoch; `cores` is what num_workers=auto would use.
std::optional<std::string> data_bound_warning(const LoaderTiming& timing, double epoch_seconds, int num_workers,
                                              int64_t epoch, int cores);

}  // namespace trainer::data
