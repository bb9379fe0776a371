// What the engine runs on: LibTorch version and source, CUDA devices, intra-op threads and the
// BLAS library actually loaded (Debian's reference BLAS is 1.6-4x slower than OpenBLAS).
#pragma once

#include <string>

namespace trainer::engine {

struct RuntimeInfo {
  std::string torch_version;  // "1.13.1", "2.11.0"
  std::string torch_source;   // "debian" or "wheel"
  bool cuda_available = false;
  int cuda_devices = 0;
  int intra_op_threads = 1;
  std::string blas_library;  // resolved path of the loaded libblas, or "" when none is mapped
  bool reference_blas = false;
};

RuntimeInfo runtime_info();
std::string describe(const RuntimeInfo& info);

}  // namespace trainer::engine
