// Adam, AdamW and SGD on the CPU as one pass over each parameter (what torch.optim's fused=True
// is on a GPU), instead of LibTorch's chain of about ten ATen operations per parameter, each a
// full pass over memory with a temporary tensor: on the mlp the optimizer step was a fifth of the
// training step (BENCHMARKS.md, "Optimizer step on the CPU").
//
// The optimizers are torch::optim::Adam / AdamW / SGD with only step() replaced: options, state
// (step count, exp_avg, exp_avg_sq, momentum_buffer), save() and load() are LibTorch's, so a
// checkpoint resumes on either. The update is LibTorch's to the last bit, in float32 and float64:
// the same operations in the same order, each rounded where ATen rounds it (fused multiply-adds
// where ATen's AVX2 kernels fuse them, none on a CPU without AVX2, cpu_optimizer_kernels.h), and
// where ATen takes square roots from MKL (the wheel build), through ATen's own sqrt. A parameter
// in another dtype (bfloat16, half), a non-contiguous tensor or a sparse gradient takes LibTorch's
// own step for that step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

namespace trainer::engine {

// Whether the fused CPU loops exist for this machine and build (an x86-64 CPU) and for
// parameters of `dtype` (float32 or float64).
bool cpu_fused_optimizer_available(c10::ScalarType dtype);

// Which instruction set the loops run ("avx2+fma" or "generic"), following ATen's own choice
// (ATEN_CPU_CAPABILITY, then the CPU) so that both round alike.
std::string cpu_fused_optimizer_isa();

// LibTorch's optimizer `name` ("adam", "adamw", "sgd") with the given settings and the fused step.
// SGD's dampening is 0 (as configs/optimizer/sgd.yaml has no key for it).
std::unique_ptr<torch::optim::Optimizer> make_cpu_fused_optimizer(const std::string& name,
                                                                  std::vector<at::Tensor> parameters, double lr,
                                                                  double beta1, double beta2, double eps,
                                                                  double weight_decay, double momentum, bool nesterov);

}  // namespace trainer::engine
