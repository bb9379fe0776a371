// The weights of a "true" precision (64-true, 16-true, bf16-true): every floating-point parameter
// and buffer cast to the precision's dtype, as PyTorch's Module.to(dtype) does. LibTorch's C++
// Module::to(dtype) casts every tensor, integer ones included: a batch norm's
// num_batches_tracked became a bfloat16 counter that stops at 256, and exports carried it so.
#pragma once

#include <ATen/core/ATen_fwd.h>
#include <torch/nn/module.h>

namespace trainer::engine {

// Casts `module`'s floating-point parameters and buffers (recursively) to `dtype` in place: the
// same tensors, so optimizers and TorchScript modules that share them see the new data.
void cast_floating_tensors(torch::nn::Module& module, at::ScalarType dtype);

}  // namespace trainer::engine
