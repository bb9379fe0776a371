#include "trainer/engine/blas_threads.h"

#include <dlfcn.h>

#include <cstdlib>

namespace trainer::engine {

namespace {

// OpenBLAS's own names for its threading (openblas_get_parallel()).
constexpr int kOpenBlasPthreads = 1;

bool set_in_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

}  // namespace

std::string limit_openblas_pool(int intra_op_threads) {
  // Only an OpenBLAS that LibTorch already brought in: RTLD_NOLOAD loads nothing.
  void* library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return "";
  using GetInt = int (*)();
  using SetInt = void (*)(int);
  auto get_parallel = reinterpret_cast<GetInt>(dlsym(library, "openblas_get_parallel"));
  auto get_threads = reinterpret_cast<GetInt>(dlsym(library, "openblas_get_num_threads"));
  auto set_threads = reinterpret_cast<SetInt>(dlsym(library, "openblas_set_num_threads"));
  std::string text;
  if (get_parallel != nullptr && get_threads != nullptr && set_threads != nullptr &&
      get_parallel() == kOpenBlasPthreads) {
    const int threads = get_threads();
    if (set_in_environment("OPENBLAS_NUM_THREADS") || set_in_environment("GOTO_NUM_THREADS")) {
      text = "OpenBLAS pool of " + std::to_string(threads) + " threads (OPENBLAS_NUM_THREADS)";
    } else if (threads > 1 && intra_op_threads > 1) {
      set_threads(1);
      text = "OpenBLAS on one thread beside ATen's pool (OPENBLAS_NUM_THREADS=" + std::to_string(threads) +
             " for its own pool)";
    }
  }
  dlclose(library);  // drops the reference RTLD_NOLOAD took; LibTorch's own keeps it loaded
  return text;
}

}  // namespace trainer::engine
