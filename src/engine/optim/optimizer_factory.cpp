#include "trainer/engine/optim/optimizer_factory.h"

#include <utility>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "trainer/engine/optim/cpu_fused_optimizer.h"
#include "trainer/engine/optim/fused_adam.h"
#include "trainer/util/error.h"

namespace trainer::engine {

namespace {

// "BFloat16 (precision=bf16-true)": the parameters' dtype and the setting that gives it.
std::string dtype_origin(c10::ScalarType dtype) {
  std::string text = c10::toString(dtype);
  if (dtype == at::kBFloat16) return text + " (precision=bf16-true)";
  if (dtype == at::kHalf) return text + " (precision=16-true)";
  return text;
}

}  // namespace

OptimizerStep optimizer_step(const OptimizerOptions& o, const at::Device& device, c10::ScalarType dtype) {
  if (o.fused == false) return OptimizerStep::kLoop;
  const std::string name = optimizer_name(o.kind);
  if (device.is_cuda()) {
    if (o.kind != OptimizerKind::kSgd && fused_adam_available(device)) return OptimizerStep::kFusedCuda;
    if (!o.fused.has_value()) return OptimizerStep::kLoop;
    throw Error("optimizer.fused",
                "true, but this build has no fused " + name + " for CUDA" +
                    (o.kind == OptimizerKind::kSgd ? " (only Adam and AdamW are fused on a GPU)" : ""),
                "Set optimizer.fused=null (the fused step where there is one) or false.");
  }
  if (cpu_fused_optimizer_available(dtype)) return OptimizerStep::kFusedCpu;
  if (!o.fused.has_value()) return OptimizerStep::kLoop;
  const bool known_dtype = cpu_fused_optimizer_available(at::kFloat);
  throw Error("optimizer.fused",
              known_dtype ? "true, but the fused CPU step takes float32 and float64 parameters, and these are " +
                                dtype_origin(dtype)
                          : "true, but the fused CPU step is built for x86-64 CPUs only",
              "Set optimizer.fused=null (the fused step where there is one) or false.");
}

std::string optimizer_step_text(OptimizerStep step, const OptimizerOptions& o, const at::Device& device,
                                c10::ScalarType dtype) {
  switch (step) {
    case OptimizerStep::kFusedCuda:
      return "one fused kernel for all parameters (CUDA)";
    case OptimizerStep::kFusedCpu:
      return "one pass over each parameter on the CPU (" + cpu_fused_optimizer_isa() +
             "; optimizer.fused=false for LibTorch's loop)";
    case OptimizerStep::kLoop:
      break;
  }
  std::string text = "LibTorch's loop of operations per parameter";
  if (o.fused == false) return text + " (optimizer.fused=false)";
  if (device.is_cuda()) return text + " (no fused " + std::string(optimizer_name(o.kind)) + " for CUDA)";
  if (!cpu_fused_optimizer_available(at::kFloat)) return text + " (the fused CPU step is built for x86-64 only)";
  return text + " (no fused CPU step for " + dtype_origin(dtype) + " parameters)";
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> parameters,
                                                        const at::Device& device) {
  c10::ScalarType dtype = at::kFloat;
  for (const auto& p : parameters) {
    if (p.is_floating_point()) {
      dtype = p.scalar_type();
      break;
    }
  }
  const OptimizerStep step = optimizer_step(o, device, dtype);
  const double eps = 1e-8;
  if (step == OptimizerStep::kFusedCuda) {
    return make_fused_adam(optimizer_name(o.kind), std::move(parameters), o.lr, o.betas[0], o.betas[1], eps,
                           o.weight_decay, device);
  }
  if (step == OptimizerStep::kFusedCpu) {
    return make_cpu_fused_optimizer(optimizer_name(o.kind), std::move(parameters), o.lr, o.betas[0], o.betas[1], eps,
                                    o.weight_decay, o.momentum, o.nesterov);
  }
  if (o.kind == OptimizerKind::kSgd) {
    return std::make_unique<torch::optim::SGD>(
        std::move(parameters),
        torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay));
  }
  if (o.kind == OptimizerKind::kAdam) {
    return std::make_unique<torch::optim::Adam>(
        std::move(parameters),
        torch::optim::AdamOptions(o.lr).betas(std::make_tuple(o.betas[0], o.betas[1])).weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::AdamW>(
      std::move(parameters),
      torch::optim::AdamWOptions(o.lr).betas(std::make_tuple(o.betas[0], o.betas[1])).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

void set_momentum(torch::optim::Optimizer& optimizer, double momentum) {
  for (auto& group : optimizer.param_groups()) {
    torch::optim::OptimizerOptions& options = group.options();
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
      sgd->momentum(momentum);
    } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
      adam->betas(std::make_tuple(momentum, std::get<1>(adam->betas())));
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
      adamw->betas(std::make_tuple(momentum, std::get<1>(adamw->betas())));
    }
  }
}

void clip_gradients(const std::vector<at::Tensor>& parameters, double value, bool by_norm,
                    const std::function<void(at::Tensor& squared_norm)>& sum_across) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (!by_norm) {
    for (auto& g : grads) g.clamp_(-value, value);
    return;
  }
  if (grads.empty() && !sum_across) return;
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.norm(2));
  at::Tensor total;
  if (sum_across) {
    // A stage without gradients still takes part in the sum (in its parameters' dtype).
    at::Tensor squared = norms.empty() ? at::zeros({}, parameters.empty() ? at::TensorOptions().dtype(at::kFloat)
                                                                          : parameters[0].options())
                                       : at::stack(norms).square().sum();
    sum_across(squared);
    total = squared.sqrt();
  } else {
    total = at::stack(norms).norm(2);
  }
  at::Tensor scale = (value / (total + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) g.mul_(scale);
}

}  // namespace trainer::engine
