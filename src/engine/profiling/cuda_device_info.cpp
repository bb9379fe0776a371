#include "trainer/engine/profiling/cuda_device_info.h"

#include <cstdio>

#if TRAINER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace trainer::engine {

#if TRAINER_WITH_CUDA
std::optional<CudaDeviceInfo> cuda_device_info(int device) {
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(device);
  if (properties == nullptr) return std::nullopt;
  char bus_id[32];
  std::snprintf(bus_id, sizeof bus_id, "%04X:%02X:%02X.0", static_cast<unsigned>(properties->pciDomainID),
                static_cast<unsigned>(properties->pciBusID), static_cast<unsigned>(properties->pciDeviceID));
  return CudaDeviceInfo{properties->name, bus_id};
}
#else
std::optional<CudaDeviceInfo> cuda_device_info(int) { return std::nullopt; }
#endif

}  // namespace trainer::engine
