// The optimizer a job's `optimizer` section asks for (sgd, adam, adamw; Adam and AdamW on CUDA as
// one fused kernel, fused_adam.h), the LR the schedule sets on it, and gradient clipping by value
// or by norm without a host sync (torch::nn::utils::clip_grad_norm_ returns a double).
#pragma once

#include <memory>
#include <vector>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// True when `o` runs as the fused CUDA kernel on `device`.
bool uses_fused_adam(const OptimizerOptions& o, const at::Device& device);

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> parameters,
                                                        const at::Device& device);

// Sets every parameter group's learning rate.
void set_lr(torch::optim::Optimizer& optimizer, double lr);

// Clamps each gradient to [-value, value], or (by_norm) scales all of them so that their global
// L2 norm is at most `value`; the norm stays on the device.
void clip_gradients(const std::vector<at::Tensor>& parameters, double value, bool by_norm);

}  // namespace trainer::engine
