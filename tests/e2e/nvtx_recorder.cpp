// An NVTX tool for the end-to-end tests: loaded by the NVTX 3 headers compiled into the trainer
// through NVTX_INJECTION64_PATH (the way Nsight Systems attaches), it receives the process's
// nvtxRangePushA / nvtxRangePop calls and appends one line per call to the file named by
// TRAINER_NVTX_RECORD: "push <name>" or "pop". Without a GPU this is how the tests see the ranges
// that `nsys profile --trace=nvtx` would show.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <nvtx3/nvToolsExt.h>  // brings nvtxTypes.h: the tool interface's tables and IDs

namespace {

std::mutex g_mutex;
std::FILE* g_out = nullptr;
int g_depth = 0;

int NVTX_API record_push(const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_out != nullptr) {
    std::fprintf(g_out, "push %s\n", message != nullptr ? message : "");
    std::fflush(g_out);
  }
  return g_depth++;  // NVTX returns the level of the range pushed (0-based)
}

int NVTX_API record_pop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_out != nullptr) {
    std::fputs("pop\n", g_out);
    std::fflush(g_out);
  }
  return g_depth > 0 ? --g_depth : -2;  // -2: NVTX's "no range open"
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int NVTX_API
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const char* path = std::getenv("TRAINER_NVTX_RECORD");
  if (path == nullptr || get_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 || table == nullptr ||
      size <= NVTX_CBID_CORE_RangePop) {
    return 0;
  }
  g_out = std::fopen(path, "w");
  if (g_out == nullptr) return 0;
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&record_push);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&record_pop);
  return 1;  // attached
}
