// Adam and AdamW on CUDA as one fused ATen kernel over all parameters (what torch.optim's
// fused=True runs), instead of LibTorch's C++ loop of about ten kernels per parameter: on a GPU the
// per-parameter launches, not the arithmetic, bound the optimizer step of a small model.
//
// The optimizers are torch::optim::Adam / AdamW with only step() replaced: options, parameter
// state (step count, exp_avg, exp_avg_sq), save() and load() are LibTorch's, so checkpoints are the
// same files either way and resume across the two. The update is the same formula; the kernel's
// arithmetic order differs from the loop's by float rounding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

namespace trainer::engine {

// Whether this LibTorch has the fused Adam/AdamW kernels for `device`: CUDA with LibTorch 2.x, and
// the CPU from 2.4. The engine uses them on CUDA only, where kernel launches dominate; on the CPU
// it keeps LibTorch's loop, so the Debian and wheel builds train alike there.
bool fused_adam_available(const c10::Device& device);

// A fused `adam` or `adamw` (decoupled weight decay) with the given options; null where
// fused_adam_available() is false.
std::unique_ptr<torch::optim::Optimizer> make_fused_adam(const std::string& name, std::vector<at::Tensor> parameters,
                                                         double lr, double beta1, double beta2, double eps,
                                                         double weight_decay, const c10::Device& device);

}  // namespace trainer::engine
