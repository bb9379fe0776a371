// What the GPU monitors need to know about the CUDA device a job trains on: its name (for the
// table of peak FLOP/s) and PCI bus id (to find the same GPU in NVML, whose numbering ignores
// CUDA_VISIBLE_DEVICES).
#pragma once

#include <optional>
#include <string>

namespace trainer::engine {

struct CudaDeviceInfo {
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "0000:3B:00.0", the form cudaDeviceGetPCIBusId writes
};

// nullopt in a LibTorch built without CUDA.
std::optional<CudaDeviceInfo> cuda_device_info(int device);

}  // namespace trainer::engine
