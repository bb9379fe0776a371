#include "trainer/engine/runtime_info.h"

#include <link.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/version.h>

namespace trainer::engine {
namespace {

int find_blas(dl_phdr_info* info, size_t, void* data) {
  std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.find("libblas.so") != std::string::npos || name.find("libopenblas") != std::string::npos ||
      name.find("libmkl_") != std::string::npos) {
    char resolved[PATH_MAX];
    auto* out = static_cast<std::string*>(data);
    *out = realpath(name.c_str(), resolved) ? resolved : name;
    return 1;
  }
  return 0;
}

}  // namespace

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.torch_version = TORCH_VERSION;
  info.torch_source = TRAINER_LIBTORCH_SOURCE;
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.intra_op_threads = at::get_num_threads();
  dl_iterate_phdr(find_blas, &info.blas_library);
  // Debian's alternatives point libblas.so.3 at blas/ (reference) or openblas-*/ directories.
  info.reference_blas = info.blas_library.find("/blas/libblas") != std::string::npos;
  return info;
}

std::string describe(const RuntimeInfo& info) {
  std::string text = "LibTorch " + info.torch_version + " (" + info.torch_source + "), ";
  text += info.cuda_available ? std::to_string(info.cuda_devices) + " CUDA device(s)" : "CPU only";
  text += ", " + std::to_string(info.intra_op_threads) + " intra-op thread(s)";
  if (!info.blas_library.empty()) text += ", BLAS " + info.blas_library;
  if (info.reference_blas) {
    text += " (the slow reference BLAS: apt-get install libopenblas0-pthread)";
  }
  return text;
}

}  // namespace trainer::engine
