// FLOP/s and model FLOPs utilisation (MFU) at each logging step, from the samples the loop has
// already counted: no extra work per step and no device sync. A training step is taken as 3x the
// forward FLOPs (the backward pass costs about twice the forward: gradients of the inputs and of
// the weights), the convention of PaLM's MFU and Lightning's ThroughputMonitor.
#pragma once

#include <cstdint>
#include <string>

#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

struct FlopsThroughput {
  double flops_per_sample = 0;  // one sample's share of a training step, 3x forward; 0: unknown (nothing logged)
  double peak_flops = 0;        // FLOP/s of all devices together; 0: no MFU (CPU, unknown GPU)

  // FLOP/s of `samples` (every rank's) in `seconds`, and its share of the peak.
  double flops_per_sec(int64_t samples, double seconds) const;
  // Adds `flops_per_sec` and, with a peak, `mfu` (a fraction, 0..1).
  void add_to(MetricRow& row, int64_t samples, double seconds) const;
  // " 1.41 GFLOP/s" and " MFU 31.2 %" for the log line; empty when unknown.
  std::string text(int64_t samples, double seconds) const;
};

}  // namespace trainer::engine
