#include "trainer/engine/profiling/memory_stats.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if TRAINER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace trainer::engine {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A "VmRSS:   1234 kB" line of /proc/self/status, in MiB; 0 where it cannot be read.
double proc_status_mb(const char* key) {
  std::FILE* file = std::fopen("/proc/self/status", "r");
  if (file == nullptr) return 0;
  char line[256];
  double mb = 0;
  const size_t key_length = std::strlen(key);
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, key, key_length) == 0 && line[key_length] == ':') {
      mb = std::strtod(line + key_length + 1, nullptr) / 1024.0;
      break;
    }
  }
  std::fclose(file);
  return mb;
}

}  // namespace

double host_rss_mb() { return proc_status_mb("VmRSS"); }
double host_peak_rss_mb() { return proc_status_mb("VmHWM"); }

#if TRAINER_WITH_CUDA
std::optional<CudaMemory> cuda_memory(int device) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  CudaMemory memory;
  memory.allocated_mb = static_cast<double>(stats.allocated_bytes[all].current) / kMiB;
  memory.reserved_mb = static_cast<double>(stats.reserved_bytes[all].current) / kMiB;
  memory.peak_allocated_mb = static_cast<double>(stats.allocated_bytes[all].peak) / kMiB;
  return memory;
}
#else
std::optional<CudaMemory> cuda_memory(int) { return std::nullopt; }
#endif

bool is_out_of_memory_message(const std::string& message) {
  for (const char* sign : {"out of memory", "not enough memory", "can't allocate memory", "Cannot allocate memory"}) {
    if (message.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace trainer::engine
