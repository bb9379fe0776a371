// The training metrics' running sums as numbers on the host: what a DeviceMeter reads back, and
// what a checkpoint keeps of an epoch in progress.
#pragma once

#include <cstdint>

namespace trainer::engine {

struct MetricSums {
  double loss_sum = 0.0;  // sum of loss x batch size
  double correct = 0.0;   // correctly classified samples
  // A regression's sums (in the learnt scale): |error|, error^2, target, target^2.
  double abs_error = 0.0, squared_error = 0.0, target_sum = 0.0, target_squares = 0.0;
  int64_t samples = 0;
  int64_t batches = 0;
};

}  // namespace trainer::engine
