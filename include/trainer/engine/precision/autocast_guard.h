// RAII autocast: what Python's `with torch.autocast(device_type, dtype):` does, for C++ (LibTorch
// has no guard of its own). On entry it saves the device's autocast state (enabled, dtype, cache),
// enables autocast in `dtype` and increments the nesting depth; on exit it decrements the depth,
// clears the cast-weight cache when the outermost guard closes (the weights change at the next
// optimizer step) and restores the saved state. Autocast state is thread-local: the guard affects
// only the thread that builds it, so the forward pass must run on that thread.
//
// CPU autocast runs in bfloat16 with every supported LibTorch and in float16 from 2.0 on; CUDA in
// both. An unsupported combination throws std::invalid_argument before anything changes (the
// trainer checks the combination earlier and names the `precision` setting).
#pragma once

#include <stdexcept>
#include <string>

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "trainer/engine/torch_compat.h"

namespace trainer::engine {

class AutocastGuard {
 public:
  // enabled=false makes an inactive guard that changes nothing (for code that runs either way).
  AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true, bool cache_enabled = true)
      : device_(device), active_(enabled) {
    if (!active_) return;
    if (!compat::autocast_supported(device, dtype)) {
      throw std::invalid_argument(std::string("autocast in ") + c10::toString(dtype) + " is not available on " +
                                  c10::DeviceTypeName(device) + " with LibTorch " + compat::torch_version_text());
    }
    previous_enabled_ = compat::autocast_enabled(device);
    previous_dtype_ = compat::autocast_dtype(device);
    previous_cache_enabled_ = compat::autocast_cache_enabled();
    compat::set_autocast_enabled(device, true);
    compat::set_autocast_dtype(device, dtype);
    compat::set_autocast_cache_enabled(cache_enabled);
    compat::autocast_increment_nesting();
  }

  ~AutocastGuard() {
    if (!active_) return;
    if (compat::autocast_decrement_nesting() == 0) compat::autocast_clear_cache();
    compat::set_autocast_enabled(device_, previous_enabled_);
    compat::set_autocast_dtype(device_, previous_dtype_);
    compat::set_autocast_cache_enabled(previous_cache_enabled_);
  }

  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool active_;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
  bool previous_cache_enabled_ = true;
};

}  // namespace trainer::engine
