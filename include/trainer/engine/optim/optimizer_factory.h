// The optimizer a job's `optimizer` section asks for (sgd, adam, adamw; Adam and AdamW on CUDA as
// one fused kernel, fused_adam.h; all three on the CPU as one loop, cpu_fused_optimizer.h), the LR the schedule sets on
// it, and gradient clipping by value or by norm without a host sync (torch::nn::utils::clip_grad_norm_ returns a
// double).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// How the optimizer steps: LibTorch's loop of ATen operations per parameter, the fused CUDA
// kernel (Adam, AdamW), or the fused CPU loops (cpu_fused_optimizer.h).
enum class OptimizerStep { kLoop, kFusedCuda, kFusedCpu };

// The step `o` gets for parameters of `dtype` on `device`: with optimizer.fused null the fused
// one wherever it exists, with false the loop. With true, a fused step that does not exist here is
// a trainer::Error naming optimizer.fused, what is missing and the fix.
OptimizerStep optimizer_step(const OptimizerOptions& o, const at::Device& device, c10::ScalarType dtype);

// One line for the log: "one fused kernel for all parameters (CUDA)", ..., with why LibTorch's loop
// runs where it does.
std::string optimizer_step_text(OptimizerStep step, const OptimizerOptions& o, const at::Device& device,
                                c10::ScalarType dtype);

// The optimizer, stepping as optimizer_step() says for the parameters' dtype.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> parameters,
                                                        const at::Device& device);

// Sets every parameter group's learning rate.
void set_lr(torch::optim::Optimizer& optimizer, double lr);

// Sets every parameter group's momentum: SGD's momentum, Adam's and AdamW's beta1 (what
// PyTorch's OneCycleLR cycles).
void set_momentum(torch::optim::Optimizer& optimizer, double momentum);

// Clamps each gradient to [-value, value], or (by_norm) scales all of them so that their global
// L2 norm is at most `value`; the norm stays on the device.
// `sum_across` (a pipeline's stages) adds the squared norms of the other processes' gradients to
// this one's, so that the norm is the whole model's; every process must call it.
void clip_gradients(const std::vector<at::Tensor>& parameters, double value, bool by_norm,
                    const std::function<void(at::Tensor& squared_norm)>& sum_across = {});

}  // namespace trainer::engine
