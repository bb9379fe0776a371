// Memory readings for the device stats monitor and the out-of-memory report: this process's
// resident memory (from /proc) and, in a CUDA build of LibTorch, the caching allocator's counters.
// All host bookkeeping: reading them never synchronises with a device.
#pragma once

#include <optional>
#include <string>

namespace trainer::engine {

// This process's resident set now (VmRSS) and at its peak (VmHWM), in MiB; 0 where unreadable.
double host_rss_mb();
double host_peak_rss_mb();

struct CudaMemory {
  double allocated_mb = 0;       // held by tensors now
  double reserved_mb = 0;        // held by the caching allocator (allocated + cached)
  double peak_allocated_mb = 0;  // the most held by tensors since the process started
};

// The caching allocator's counters for a CUDA device; nullopt in a LibTorch built without CUDA.
std::optional<CudaMemory> cuda_memory(int device);

// Whether a LibTorch error message is an allocation failure (CUDA's "out of memory", the CPU
// allocator's "not enough memory" / "can't allocate memory").
bool is_out_of_memory_message(const std::string& message);

}  // namespace trainer::engine
