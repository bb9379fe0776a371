#include "trainer/engine/device_stats_monitor.h"

#include <sys/resource.h>

#include "trainer/engine/memory_stats.h"

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
  o.cpu_stats = section.get_or<bool>("cpu_stats", o.cpu_stats);
  return o;
}

void DeviceStatsMonitor::on_fit_start(FitContext&) {
  last_wall_ = std::chrono::steady_clock::now();
  last_cpu_seconds_ = cpu_seconds();
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
  if (!row.empty()) context.log(row);
}

}  // namespace trainer::engine
