#include "trainer/engine/optim/optimizer_factory.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "trainer/engine/optim/fused_adam.h"

namespace trainer::engine {

bool uses_fused_adam(const OptimizerOptions& o, const at::Device& device) {
  return device.is_cuda() && fused_adam_available(device) && o.kind != OptimizerKind::kSgd;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> parameters,
                                                        const at::Device& device) {
  if (uses_fused_adam(o, device)) {
    return make_fused_adam(optimizer_name(o.kind), parameters, o.lr, o.betas[0], o.betas[1], 1e-8, o.weight_decay,
                           device);
  }
  if (o.kind == OptimizerKind::kSgd) {
    return std::make_unique<torch::optim::SGD>(
        parameters,
        torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay));
  }
  if (o.kind == OptimizerKind::kAdam) {
    return std::make_unique<torch::optim::Adam>(
        parameters,
        torch::optim::AdamOptions(o.lr).betas(std::make_tuple(o.betas[0], o.betas[1])).weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::AdamW>(
      parameters,
      torch::optim::AdamWOptions(o.lr).betas(std::make_tuple(o.betas[0], o.betas[1])).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

void clip_gradients(const std::vector<at::Tensor>& parameters, double value, bool by_norm) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return;
  if (!by_norm) {
    for (auto& g : grads) g.clamp_(-value, value);
    return;
  }
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.norm(2));
  at::Tensor total = at::stack(norms).norm(2);
  at::Tensor scale = (value / (total + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) g.mul_(scale);
}

}  // namespace trainer::engine
