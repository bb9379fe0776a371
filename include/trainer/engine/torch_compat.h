// The one place where the two supported LibTorch versions differ (Debian's 1.13 and the 2.11
// wheel). Code elsewhere calls these wrappers instead of testing versions itself.
#pragma once

#include <cstdint>

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#define TRAINER_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace trainer::engine::compat {

// Autocast state per device type. 2.4+ has device-generic calls; 1.13 has CPU/CUDA pairs.
inline bool autocast_enabled(c10::DeviceType device) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
#endif
}

inline c10::ScalarType autocast_dtype(c10::DeviceType device) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType device, c10::ScalarType dtype) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

// CPU autocast accepts float16 only from 2.x on (1.13: "AutocastCPU only support Bfloat16").
constexpr bool kCpuAutocastSupportsHalf = TRAINER_TORCH_AT_LEAST(2, 0);

// Whether autocast can run on `device` in `dtype` (kHalf or kBFloat16) with this LibTorch.
inline bool autocast_supported(c10::DeviceType device, c10::ScalarType dtype) {
  if (dtype != c10::ScalarType::Half && dtype != c10::ScalarType::BFloat16) return false;
  if (device == c10::DeviceType::CUDA) return true;
  if (device == c10::DeviceType::CPU) return dtype == c10::ScalarType::BFloat16 || kCpuAutocastSupportsHalf;
  return false;
}

// Autocast's nesting depth and weight-cast cache: the same calls in 1.13 and 2.x.
inline int autocast_increment_nesting() { return at::autocast::increment_nesting(); }
inline int autocast_decrement_nesting() { return at::autocast::decrement_nesting(); }
inline void autocast_clear_cache() { at::autocast::clear_cache(); }
inline bool autocast_cache_enabled() { return at::autocast::is_autocast_cache_enabled(); }
inline void set_autocast_cache_enabled(bool enabled) { at::autocast::set_autocast_cache_enabled(enabled); }

// The fused AMP kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) exist for
// CUDA in both versions; their CPU kernels arrived in 2.3 (1.13 throws "not implemented for CPU").
inline bool fused_amp_ops_available(c10::DeviceType device) {
  if (device == c10::DeviceType::CUDA) return true;
  return device == c10::DeviceType::CPU && TRAINER_TORCH_AT_LEAST(2, 3);
}

// A profiler event's (torch::autograd::profiler::KinetoEvent) start and duration in nanoseconds:
// 2.4 moved the accessors from microseconds to nanoseconds (startUs/durationUs became
// startNs/durationNs). Templates, so this header needs no profiler include.
template <class ProfilerEvent>
uint64_t profiler_event_start_ns(const ProfilerEvent& event) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  return event.startNs();
#else
  return event.startUs() * 1000;
#endif
}
template <class ProfilerEvent>
uint64_t profiler_event_duration_ns(const ProfilerEvent& event) {
#if TRAINER_TORCH_AT_LEAST(2, 4)
  return event.durationNs();
#else
  return event.durationUs() * 1000;
#endif
}

// "1.13" / "2.11": named in error messages about what this LibTorch can do.
inline const char* torch_version_text() { return TORCH_VERSION; }

}  // namespace trainer::engine::compat

// c10d: from 2.0 on Gloo and NCCL derive from c10d::Backend (c10d::ProcessGroup became a
// dispatching wrapper whose constructor changed within 2.x); in 1.13 they derive from
// c10d::ProcessGroup. Collectives called on this base work in both.
namespace c10d {
class Backend;
class ProcessGroup;
}  // namespace c10d

namespace trainer::engine::compat {
#if TRAINER_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif
}  // namespace trainer::engine::compat

namespace trainer::engine::compat {
// Whether this LibTorch's TCPStore client can join the store torchrun's agent hosts (PyTorch 2.x
// torchrun, TORCHELASTIC_USE_AGENT_STORE): 2.x clients can; 1.13's waits for answers that never come.
inline constexpr bool tcpstore_client_speaks_torchrun_2() { return TRAINER_TORCH_AT_LEAST(2, 0); }
}  // namespace trainer::engine::compat

// c10::Allocator (the counting CPU allocator of trial_memory_meter.cpp): allocate() is const in
// 1.13 and not const in 2.x, which also makes copy_data() pure virtual (both changed in 2.3).
#if TRAINER_TORCH_AT_LEAST(2, 3)
#define TRAINER_ALLOCATE_CONST
#define TRAINER_ALLOCATOR_HAS_COPY_DATA 1
#else
#define TRAINER_ALLOCATE_CONST const
#define TRAINER_ALLOCATOR_HAS_COPY_DATA 0
#endif
