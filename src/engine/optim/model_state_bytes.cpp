#include "trainer/engine/optim/model_state_bytes.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "trainer/util/fixed_text.h"

namespace trainer::engine {
namespace {

int64_t bytes_of(const at::Tensor& tensor) {
  return tensor.defined() ? static_cast<int64_t>(tensor.numel()) * static_cast<int64_t>(tensor.element_size()) : 0;
}

int64_t state_bytes(torch::optim::OptimizerParamState& state) {
  if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
    return bytes_of(adam->exp_avg()) + bytes_of(adam->exp_avg_sq()) + bytes_of(adam->max_exp_avg_sq());
  }
  if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(&state)) {
    return bytes_of(adamw->exp_avg()) + bytes_of(adamw->exp_avg_sq()) + bytes_of(adamw->max_exp_avg_sq());
  }
  if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(&state)) return bytes_of(sgd->momentum_buffer());
  return 0;
}

std::string mib(int64_t bytes) { return fixed_text(static_cast<double>(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

}  // namespace

ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, torch::optim::Optimizer& optimizer) {
  ModelStateBytes bytes;
  for (const at::Tensor& p : parameters) {
    bytes.parameters += bytes_of(p);
    // Its gradient during a step, of its size: LibTorch 2's zero_grad frees gradients between
    // steps (set_to_none), 1.13's keeps them, so the tensors at hand would say either.
    if (p.requires_grad()) bytes.gradients += bytes_of(p);
  }
  for (auto& entry : optimizer.state()) {
    if (entry.second) bytes.optimizer += state_bytes(*entry.second);
  }
  return bytes;
}

std::string describe(const ModelStateBytes& bytes) {
  return "parameters " + mib(bytes.parameters) + ", gradients " + mib(bytes.gradients) + ", optimizer state " +
         mib(bytes.optimizer);
}

}  // namespace trainer::engine
