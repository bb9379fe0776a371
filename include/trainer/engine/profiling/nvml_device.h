// GPU-wide readings from NVML, the library behind nvidia-smi: utilisation, memory used and total
// (every process on the GPU, not only this one's tensors), temperature and power. NVML is loaded
// with dlopen at run time (no link-time dependency: the driver installs it, a CPU machine has
// none), and the GPU is found by the PCI bus id CUDA reports, because NVML numbers GPUs without
// regard to CUDA_VISIBLE_DEVICES. Absent NVML, a missing symbol or an unknown GPU: no device, no error.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace trainer::engine {

struct NvmlReading {
  std::optional<double> gpu_percent;     // time a kernel ran over NVML's last sample period
  std::optional<double> memory_percent;  // time device memory was read or written, same period
  std::optional<double> memory_used_mb;  // MiB, device-wide, as nvidia-smi's "Memory-Usage"
  std::optional<double> memory_total_mb;
  std::optional<double> temperature_c;
  std::optional<double> power_w;
};

class NvmlDevice {
 public:
  static constexpr const char* kLibrary = "libnvidia-ml.so.1";

  // The GPU with this PCI bus id ("0000:3B:00.0"); where that lookup fails, the GPU at position
  // `cuda_index` of a numeric CUDA_VISIBLE_DEVICES (or at NVML index `cuda_index` without one).
  // nullptr when the library, one of its functions or the GPU is missing. Never throws.
  static std::unique_ptr<NvmlDevice> open(const std::string& pci_bus_id, int cuda_index,
                                          const std::string& library = kLibrary);
  ~NvmlDevice();
  NvmlDevice(const NvmlDevice&) = delete;
  NvmlDevice& operator=(const NvmlDevice&) = delete;

  NvmlReading read() const;                          // a field NVML cannot give (power on some boards) stays empty
  const std::string& name() const { return name_; }  // NVML's name of the GPU
  const std::string& found_by() const { return found_by_; }  // "PCI bus id 0000:3B:00.0", ...

  struct Api;  // the NVML functions used, resolved with dlsym (nvml_device.cpp)

 private:
  NvmlDevice() = default;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;  // nvmlDevice_t
  std::string name_;
  std::string found_by_;
};

}  // namespace trainer::engine
