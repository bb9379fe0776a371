// The memory one batch-size trial takes above what was held when it started. On the CPU: tensor
// storage counted at LibTorch's CPU allocator (a counting wrapper installed for the meter's
// lifetime), so the figure is exact and repeatable, unlike RSS, which also moves with glibc's
// retained heap and code pages touched for the first time. On CUDA: the caching allocator's peak
// of allocated bytes (its cache emptied before every trial).
#pragma once

#include <c10/core/Device.h>

namespace trainer::engine {

class TrialMemoryMeter {
 public:
  explicit TrialMemoryMeter(const c10::Device& device);  // CPU: installs the counting allocator
  ~TrialMemoryMeter();                                   // CPU: puts the previous allocator back
  TrialMemoryMeter(const TrialMemoryMeter&) = delete;
  TrialMemoryMeter& operator=(const TrialMemoryMeter&) = delete;

  // A trial begins: its baseline is what is allocated now (CUDA: the cache is emptied first). On
  // the CPU, an allocation that would take the trial above `limit_mb` (> 0) fails as an
  // out-of-memory c10::Error, so a trial far too large ends early instead of exhausting the host.
  void start(double limit_mb = 0);
  // The most allocated above the baseline since start(), in MiB; on the CPU after a refused
  // allocation, what the trial asked for at that moment.
  double peak_mb() const;
  // CPU: whether an allocation was refused for the limit since start() (the trial did not fit
  // because of the limit, not because the host ran out).
  bool refused() const;

 private:
  c10::Device device_;
  long long baseline_ = 0;
};

// On the CPU, the memory a trial may take when tuner.max_memory_mb is unset: half of MemAvailable
// (/proc/meminfo) now, in MiB; 0 where unreadable.
double default_cpu_trial_limit_mb();

}  // namespace trainer::engine
