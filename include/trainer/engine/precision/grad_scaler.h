// Dynamic loss scaling for float16 mixed precision: PyTorch's torch.amp.GradScaler, which LibTorch
// lacks. Per optimizer step:
//
//   scaler.scale(loss).backward();    // gradients come out multiplied by the scale
//   scaler.unscale_(optimizer);       // optional, before gradient clipping; divides them back and
//                                     // records whether any gradient is inf/NaN
//   bool stepped = scaler.step(optimizer);  // optimizer.step() unless a gradient was inf/NaN
//   scaler.update();                  // back off after a skipped step, grow after
//                                     // growth_interval good steps in a row
//
// A skipped step leaves parameters and optimizer state untouched; the caller must not advance
// its LR schedule either (step() returns false).
//
// Device work: the scale, growth tracker and found-inf flag live on the parameters' device. The
// fused ATen kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) run where
// LibTorch has them (CUDA; CPU from 2.3); elsewhere (CPU with 1.13) plain tensor ops do the same.
// The one host read per step is the found-inf flag in step(): whether optimizer.step() runs is a
// host decision, so it is inherent. It is made as late as possible (after unscaling and clipping
// are queued) and is free on CPU, where the flag is ordinary memory. update() never reads back
// on the fused path; the plain path (CPU only) reuses the flag step() already read.
#pragma once

#include <cstdint>
#include <functional>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

namespace trainer::engine {

// What a checkpoint keeps to resume loss scaling exactly.
struct GradScalerState {
  double scale = 65536.0;      // a float32 value, exact in a double
  int64_t growth_tracker = 0;  // good steps in a row since the last growth or back-off
};

class GradScaler {
 public:
  struct Options {
    bool enabled = true;
    double init_scale = 65536.0;  // 2^16
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
    // false: plain tensor ops even where the fused kernels exist (tests compare the two paths).
    bool allow_fused = true;
  };

  // Throws std::invalid_argument for options out of range (scale <= 0, growth <= 1,
  // backoff outside (0, 1), interval < 1).
  GradScaler(Options options, at::Device device);

  bool enabled() const { return options_.enabled; }
  bool fused() const { return fused_; }  // whether the fused ATen kernels do the work
  const Options& options() const { return options_; }

  // loss × scale (the loss itself when disabled).
  at::Tensor scale(const at::Tensor& loss) const;

  // Divides every gradient of the optimizer's parameters by the scale in place and records
  // whether any was inf/NaN. At most once per step; step() calls it when the caller did not.
  void unscale_(torch::optim::Optimizer& optimizer);

  // optimizer.step() unless a gradient was inf/NaN; returns whether it stepped. Disabled: always steps.
  bool step(torch::optim::Optimizer& optimizer);

  // Adjusts the scale after step(): × backoff_factor after a skipped step; × growth_factor
  // after growth_interval good steps in a row (kept only if the result is finite).
  void update();

  // Host reads, for logs, checkpoints and tests (one device sync each on CUDA).
  double current_scale() const;
  GradScalerState state() const;
  void load_state(const GradScalerState& state);

  // Where the step's inf/NaN flag is shared with other processes before step() reads it (a
  // pipeline's stages: a sum all-reduce), so that all of them skip the same steps.
  void share_found_inf(std::function<void(at::Tensor& found_inf)> share) { share_found_inf_ = std::move(share); }

  // Steps skipped for inf/NaN gradients since this scaler was built (not checkpointed).
  int64_t skipped_steps() const { return skipped_steps_; }

 private:
  enum class Stage { kReady, kUnscaled, kStepped };

  Options options_;
  at::Device device_;
  bool fused_;
  at::Tensor scale_;           // float32, one element
  at::Tensor growth_tracker_;  // int32, one element
  at::Tensor found_inf_;       // float32, one element: 1 when a gradient of this step was not finite
  Stage stage_ = Stage::kReady;
  bool found_inf_host_ = false;  // the flag as step() read it
  int64_t skipped_steps_ = 0;
  std::function<void(at::Tensor&)> share_found_inf_;
};

}  // namespace trainer::engine
