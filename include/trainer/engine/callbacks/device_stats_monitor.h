// Lightning's DeviceStatsMonitor, as `callbacks.device_stats_monitor`: at every logging step
// (trainer.log_every_n_steps) it logs memory and CPU use like any other metric (metrics.csv,
// TensorBoard):
//   device_stats/host_rss_mb, device_stats/host_peak_rss_mb   this process's resident memory
//   device_stats/cpu_percent                                  process CPU time / wall time since the last reading
//   device_stats/cuda_allocated_mb, cuda_reserved_mb, cuda_peak_allocated_mb
//                                                             the caching allocator's counters (CUDA builds on a GPU)
//   device_stats/nvml_gpu_util_percent, nvml_memory_util_percent, nvml_memory_used_mb,
//   nvml_memory_total_mb, nvml_temperature_c, nvml_power_w
//                                                             the whole GPU as nvidia-smi shows it, from NVML
//                                                             (nvml_device.h); only on a GPU where NVML loads
// Every reading is host bookkeeping (memory_stats.h, getrusage, NVML queries): no device sync.
#pragma once

#include <chrono>
#include <memory>

#include "trainer/engine/callbacks/callback.h"
#include "trainer/engine/profiling/nvml_device.h"

namespace trainer::engine {

struct DeviceStatsOptions {
  bool cpu_stats = true;  // host RSS and CPU share; off leaves only the GPU's readings
  bool nvml = true;       // the nvml_* columns on a GPU (off: no NVML is loaded)

  static DeviceStatsOptions from_config(const config::ConfigView& section);
};

class DeviceStatsMonitor final : public Callback {
 public:
  explicit DeviceStatsMonitor(DeviceStatsOptions options) : options_(options) {}

  void on_fit_start(FitContext& context) override;
  void on_log_step(FitContext& context) override;

 private:
  DeviceStatsOptions options_;
  std::chrono::steady_clock::time_point last_wall_{};
  double last_cpu_seconds_ = 0;
  std::unique_ptr<NvmlDevice> nvml_;  // null on the CPU and where NVML is absent
};

}  // namespace trainer::engine
