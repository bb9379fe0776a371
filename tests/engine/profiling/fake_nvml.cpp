// A stand-in for libnvidia-ml.so.1 on machines without an NVIDIA driver (NVML cannot run there):
// two GPUs with fixed readings, exporting the functions NvmlDevice resolves, with NVML's C
// signatures. The second GPU reports power as not supported, as some boards do.
#include <cstdio>
#include <cstring>

namespace {

struct FakeGpu {
  unsigned int domain, bus, device;
  const char* name;
  unsigned int gpu_percent, memory_percent;
  unsigned long long total, used;
  unsigned int temperature, milliwatts;
  bool power_supported;
};

FakeGpu g_gpus[] = {
    {0, 0x3B, 0, "Fake GPU A", 37, 12, 80ull << 30, 1536ull << 20, 41, 123456, true},
    {0, 0x86, 0, "Fake GPU B", 90, 55, 16ull << 30, 4096ull << 20, 67, 0, false},
};
int g_initialised = 0;

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;

FakeGpu* gpu_of(void* handle) { return static_cast<FakeGpu*>(handle); }

}  // namespace

extern "C" {

struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlMemory {
  unsigned long long total, free, used;
};

int nvmlInit_v2() {
  ++g_initialised;
  return kSuccess;
}
int nvmlShutdown() {
  if (g_initialised == 0) return kUninitialized;
  --g_initialised;
  return kSuccess;
}
// For the test: NVML sessions open now.
int fake_nvml_open_sessions() { return g_initialised; }

// "domain:bus:device.function" in hex, as NVML accepts it (4- or 8-digit domain).
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** handle) {
  if (g_initialised == 0) return kUninitialized;
  unsigned int domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return kInvalidArgument;
  for (FakeGpu& gpu : g_gpus) {
    if (gpu.domain == domain && gpu.bus == bus && gpu.device == device) {
      *handle = &gpu;
      return kSuccess;
    }
  }
  return kNotFound;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** handle) {
  if (g_initialised == 0) return kUninitialized;
  if (index >= sizeof g_gpus / sizeof g_gpus[0]) return kInvalidArgument;
  *handle = &g_gpus[index];
  return kSuccess;
}
int nvmlDeviceGetName(void* handle, char* name, unsigned int length) {
  std::snprintf(name, length, "%s", gpu_of(handle)->name);
  return kSuccess;
}
int nvmlDeviceGetUtilizationRates(void* handle, NvmlUtilization* utilization) {
  utilization->gpu = gpu_of(handle)->gpu_percent;
  utilization->memory = gpu_of(handle)->memory_percent;
  return kSuccess;
}
int nvmlDeviceGetMemoryInfo(void* handle, NvmlMemory* memory) {
  memory->total = gpu_of(handle)->total;
  memory->used = gpu_of(handle)->used;
  memory->free = memory->total - memory->used;
  return kSuccess;
}
int nvmlDeviceGetTemperature(void* handle, int sensor, unsigned int* temperature) {
  if (sensor != 0) return kInvalidArgument;
  *temperature = gpu_of(handle)->temperature;
  return kSuccess;
}
int nvmlDeviceGetPowerUsage(void* handle, unsigned int* milliwatts) {
  if (!gpu_of(handle)->power_supported) return kNotSupported;
  *milliwatts = gpu_of(handle)->milliwatts;
  return kSuccess;
}

}  // extern "C"
