// The training metrics' running sums, kept on the device and read back only when a line is
// logged, an epoch ends or a checkpoint is due; under data parallel a reading is the sum over the
// ranks (one all-reduce).
#pragma once

#include <cmath>
#include <cstdint>

#include <ATen/ATen.h>

#include "trainer/engine/distributed/process_group.h"

namespace trainer::engine {

// Running sums kept on the device and read back only when a line is logged, an epoch ends or a
// checkpoint is due. A step costs five small ops (the loss sum and the argmax accuracy); a non-finite
// loss needs no counter of its own: it makes the double-precision loss sum non-finite for good.
// Log intervals are differences of two readings, so one meter serves the interval and the epoch.
struct DeviceMeter {
  at::Tensor loss_sum;  // sum of loss x batch size, double
  at::Tensor correct;   // correctly classified samples
  int64_t samples = 0;
  int64_t batches = 0;
  ProcessGroup* group = nullptr;  // data parallel: readings are sums over every rank

  void reset(const at::Device& device, ProcessGroup* ranks = nullptr);
  // Five small device ops, no host sync.
  void add(const at::Tensor& loss, const at::Tensor& logits, const at::Tensor& targets);
  struct Reading {
    double loss_sum = 0.0;
    double correct = 0.0;
    int64_t samples = 0;
    int64_t batches = 0;
    bool finite() const { return std::isfinite(loss_sum); }
    double loss() const { return samples == 0 ? 0.0 : loss_sum / static_cast<double>(samples); }
    double accuracy() const { return samples == 0 ? 0.0 : correct / static_cast<double>(samples); }
    // What was added between `earlier` and this reading.
    Reading since(const Reading& earlier) const {
      return {loss_sum - earlier.loss_sum, correct - earlier.correct, samples - earlier.samples,
              batches - earlier.batches};
    }
  };
  // One host transfer for both values (after one all-reduce when data parallel: every rank calls
  // read() at the same points of the loop).
  Reading read() const;
};

}  // namespace trainer::engine
