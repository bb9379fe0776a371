#include "trainer/engine/profiling/nvml_device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <vector>

namespace trainer::engine {

namespace {

// The few NVML declarations used, written from NVML's documented C API (nvml.h is not needed
// to build): every call returns nvmlReturn_t, 0 (NVML_SUCCESS) on success.
using NvmlReturn = int;
using NvmlHandle = struct NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr NvmlReturn kSuccess = 0;
constexpr double kMiB = 1024.0 * 1024.0;

template <typename Function>
bool resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// CUDA_VISIBLE_DEVICES=2,3 makes CUDA device 0 the machine's GPU 2; without the variable the two
// numberings agree when CUDA_DEVICE_ORDER=PCI_BUS_ID (hence the PCI bus id lookup comes first).
std::optional<unsigned int> nvml_index_for(int cuda_index) {
  if (cuda_index < 0) return std::nullopt;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return static_cast<unsigned int>(cuda_index);
  std::vector<unsigned int> indices;
  std::stringstream list(visible);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') return std::nullopt;  // GPU-<uuid> or MIG entries
    indices.push_back(static_cast<unsigned int>(value));
  }
  if (static_cast<size_t>(cuda_index) >= indices.size()) return std::nullopt;
  return indices[static_cast<size_t>(cuda_index)];
}

}  // namespace

struct NvmlDevice::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_pci_bus_id)(const char*, NvmlHandle*) = nullptr;
  NvmlReturn (*by_index)(unsigned int, NvmlHandle*) = nullptr;
  NvmlReturn (*name)(NvmlHandle, char*, unsigned int) = nullptr;
  NvmlReturn (*utilization)(NvmlHandle, NvmlUtilization*) = nullptr;
  NvmlReturn (*memory)(NvmlHandle, NvmlMemory*) = nullptr;
  NvmlReturn (*temperature)(NvmlHandle, int, unsigned int*) = nullptr;
  NvmlReturn (*power)(NvmlHandle, unsigned int*) = nullptr;  // milliwatts
  bool initialised = false;
};

std::unique_ptr<NvmlDevice> NvmlDevice::open(const std::string& pci_bus_id, int cuda_index,
                                             const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  std::unique_ptr<NvmlDevice> device(new NvmlDevice());
  device->library_ = handle;  // closed by the destructor on every path below
  device->api_ = std::make_unique<Api>();
  Api& api = *device->api_;
  if (!resolve(handle, "nvmlInit_v2", api.init) || !resolve(handle, "nvmlShutdown", api.shutdown) ||
      !resolve(handle, "nvmlDeviceGetHandleByPciBusId_v2", api.by_pci_bus_id) ||
      !resolve(handle, "nvmlDeviceGetHandleByIndex_v2", api.by_index) ||
      !resolve(handle, "nvmlDeviceGetName", api.name) ||
      !resolve(handle, "nvmlDeviceGetUtilizationRates", api.utilization) ||
      !resolve(handle, "nvmlDeviceGetMemoryInfo", api.memory) ||
      !resolve(handle, "nvmlDeviceGetTemperature", api.temperature) ||
      !resolve(handle, "nvmlDeviceGetPowerUsage", api.power)) {
    return nullptr;
  }
  if (api.init() != kSuccess) return nullptr;
  api.initialised = true;
  NvmlHandle gpu = nullptr;
  if (!pci_bus_id.empty() && api.by_pci_bus_id(pci_bus_id.c_str(), &gpu) == kSuccess) {
    device->found_by_ = "PCI bus id " + pci_bus_id;
  } else if (const auto index = nvml_index_for(cuda_index); index && api.by_index(*index, &gpu) == kSuccess) {
    device->found_by_ = "NVML index " + std::to_string(*index) + " (CUDA device " + std::to_string(cuda_index) +
                        " through CUDA_VISIBLE_DEVICES; no PCI bus id match)";
  } else {
    return nullptr;
  }
  device->device_ = gpu;
  char name[96] = {};
  if (api.name(gpu, name, sizeof name) == kSuccess) device->name_ = name;
  return device;
}

NvmlDevice::~NvmlDevice() {
  if (api_ && api_->initialised) api_->shutdown();
  if (library_ != nullptr) ::dlclose(library_);
}

NvmlReading NvmlDevice::read() const {
  NvmlReading reading;
  const auto gpu = static_cast<NvmlHandle>(device_);
  NvmlUtilization utilization{};
  if (api_->utilization(gpu, &utilization) == kSuccess) {
    reading.gpu_percent = utilization.gpu;
    reading.memory_percent = utilization.memory;
  }
  NvmlMemory memory{};
  if (api_->memory(gpu, &memory) == kSuccess) {
    reading.memory_used_mb = static_cast<double>(memory.used) / kMiB;
    reading.memory_total_mb = static_cast<double>(memory.total) / kMiB;
  }
  unsigned int value = 0;
  if (api_->temperature(gpu, kTemperatureGpu, &value) == kSuccess) reading.temperature_c = value;
  if (api_->power(gpu, &value) == kSuccess) reading.power_w = value / 1000.0;
  return reading;
}

}  // namespace trainer::engine
