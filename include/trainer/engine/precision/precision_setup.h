// Lightning's precision settings made concrete for one device and this LibTorch: the dtype of the
// weights, autocast and its dtype, the loss scaler, and the CPU's switch from 16-mixed to
// bf16-mixed (Lightning 2.x's rule). What cannot run here is refused naming `precision`.
#pragma once

#include <memory>

#include <ATen/ATen.h>

#include "trainer/engine/precision/grad_scaler.h"
#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// precision=16-mixed on a CPU without trainer.cpu_float16_autocast runs bf16-mixed instead; true
// when that applies (after a one-line warning on rank 0).
bool falls_back_to_bf16(const TrainerOptions& options, const at::Device& device, bool warn);

struct PrecisionDtypes {
  at::ScalarType param = at::kFloat;  // weights and inputs: float32 but for 64-true and the half "true" modes
  bool autocast = false;              // the mixed modes
  at::ScalarType autocast_dtype = at::kBFloat16;
};

// The dtypes of options.precision on `device`; throws trainer::Error when this LibTorch has no
// autocast in that dtype there. Warns (when `warn`) about float16 on the CPU and 16-mixed without
// loss scaling.
PrecisionDtypes precision_dtypes(const TrainerOptions& options, const at::Device& device, bool warn);

// PyTorch's GradScaler with trainer.grad_scaler's settings, or null when loss scaling is off.
std::unique_ptr<GradScaler> make_grad_scaler(const TrainerOptions& options, const at::Device& device);

// A warning (when `warn`) for trainer.grad_scaler settings changed from their defaults while no
// loss scaling runs (precision other than 16-mixed, or 16-mixed fallen back to bf16-mixed on the
// CPU, with enabled left null): they would have no effect without a word.
void warn_about_idle_grad_scaler(const TrainerOptions& options, bool warn);

}  // namespace trainer::engine
