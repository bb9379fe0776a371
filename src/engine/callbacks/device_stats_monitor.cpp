#include "trainer/engine/callbacks/device_stats_monitor.h"

#include <sys/resource.h>

#include "trainer/engine/profiling/cuda_device_info.h"
#include "trainer/engine/profiling/memory_stats.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/log.h"

namespace trainer::engine {

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

}  // namespace

DeviceStatsOptions DeviceStatsOptions::from_config(const config::ConfigView& section) {
  DeviceStatsOptions o;
  const options::OptionReader r(section);
  o.cpu_stats = r.get<bool>("cpu_stats");
  o.nvml = r.get<bool>("nvml");
  return o;
}

void DeviceStatsMonitor::on_fit_start(FitContext& context) {
  last_wall_ = std::chrono::steady_clock::now();
  last_cpu_seconds_ = cpu_seconds();
  const int cuda = context.cuda_device();
  if (cuda < 0 && !options_.cpu_stats) {
    log::warning(
        "callbacks.device_stats_monitor.cpu_stats=false leaves only the GPU's readings, and this run is on the "
        "CPU: the monitor logs nothing; set cpu_stats=true for the host's memory and CPU use, or drop the "
        "callback");
  }
  if (!options_.nvml || cuda < 0 || nvml_) return;  // a CPU run says nothing about NVML
  const auto info = cuda_device_info(cuda);
  nvml_ = NvmlDevice::open(info ? info->pci_bus_id : std::string(), cuda);
  if (nvml_) {
    log::info("device stats: GPU '" + nvml_->name() + "' (CUDA device " + std::to_string(cuda) + ", " +
              nvml_->found_by() + ") read through NVML (" + NvmlDevice::kLibrary +
              "): device-wide utilisation, memory, temperature and power in the device_stats/nvml_* columns");
  } else {
    log::info(std::string("device stats: NVML (") + NvmlDevice::kLibrary + ") could not be loaded or has no GPU at " +
              (info ? "PCI bus id " + info->pci_bus_id : "CUDA device " + std::to_string(cuda)) +
              ": no device_stats/nvml_* columns (the caching allocator's cuda_* columns remain)");
  }
}

void DeviceStatsMonitor::on_log_step(FitContext& context) {
  MetricRow row;
  if (options_.cpu_stats) {
    const auto now = std::chrono::steady_clock::now();
    const double cpu = cpu_seconds();
    const double wall = std::chrono::duration<double>(now - last_wall_).count();
    row.push_back({"device_stats/host_rss_mb", host_rss_mb()});
    row.push_back({"device_stats/host_peak_rss_mb", host_peak_rss_mb()});
    row.push_back({"device_stats/cpu_percent", wall > 0 ? 100.0 * (cpu - last_cpu_seconds_) / wall : 0.0});
    last_wall_ = now;
    last_cpu_seconds_ = cpu;
  }
  if (context.cuda_device() >= 0) {
    if (auto cuda = cuda_memory(context.cuda_device())) {
      row.push_back({"device_stats/cuda_allocated_mb", cuda->allocated_mb});
      row.push_back({"device_stats/cuda_reserved_mb", cuda->reserved_mb});
      row.push_back({"device_stats/cuda_peak_allocated_mb", cuda->peak_allocated_mb});
    }
  }
  if (nvml_) {
    const NvmlReading gpu = nvml_->read();
    auto add = [&row](const char* name, const std::optional<double>& value) {
      if (value) row.push_back({name, *value});
    };
    add("device_stats/nvml_gpu_util_percent", gpu.gpu_percent);
    add("device_stats/nvml_memory_util_percent", gpu.memory_percent);
    add("device_stats/nvml_memory_used_mb", gpu.memory_used_mb);
    add("device_stats/nvml_memory_total_mb", gpu.memory_total_mb);
    add("device_stats/nvml_temperature_c", gpu.temperature_c);
    add("device_stats/nvml_power_w", gpu.power_w);
  }
  if (!row.empty()) context.log(row);
}

}  // namespace trainer::engine
