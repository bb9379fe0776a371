// Setting up flops_per_sec and MFU for a fit: one sample's forward FLOPs, counted once from the
// operators that actually run (flop_counter.h), and, on a CUDA device in the peak table
// (gpu_peak_flops.h), the dense peak for this model's mix of convolutions and matrix products in
// the training precision. Logs what it found and why an MFU is unavailable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <ATen/ATen.h>

#include "trainer/engine/profiling/flops_throughput.h"
#include "trainer/engine/trainer_options.h"
#include "trainer/models/model.h"

namespace trainer::engine {

struct ForwardFlops {
  int64_t total = 0;
  int64_t convolution = 0;  // the part in convolutions (cuDNN's on CUDA; MFU's peak differs)
  std::string source;       // how it was counted, for the log
};

// FLOPs of one sample's forward pass: `probe_forward` runs it (a zero sample, in the training
// precision) while a FlopCounter listens, with the model in eval mode (no dropout draw, no
// batch-norm update: the run's random stream and statistics are untouched) and without autograd.
// Falls back to the model's own count; all zero when neither knows. Never throws: a failing
// probe is a warning.
ForwardFlops count_forward_flops(models::Model& model, const std::function<void()>& probe_forward);

// What the loop logs at each logging step: flops_per_sec (3x forward per training sample) and, on a
// GPU with a known peak, mfu against `world_size` devices. Logs on the main rank only.
FlopsThroughput make_flops_throughput(const ForwardFlops& forward, const at::Device& device, Precision precision,
                                      int world_size, bool is_main);

}  // namespace trainer::engine
