// What training holds per parameter, in bytes: the parameters, their gradients (one per trainable
// parameter, as held during a step) and the optimizer's state (SGD's momentum, Adam's and AdamW's
// moments). Reported at the end of fit, per stage for a
// pipeline, beside the peak resident memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

namespace trainer::engine {

struct ModelStateBytes {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizer = 0;
  int64_t total() const { return parameters + gradients + optimizer; }
};

// Over `parameters` and the state `optimizer` keeps for them.
ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, torch::optim::Optimizer& optimizer);

// "parameters 1.2 MiB, gradients 1.2 MiB, optimizer state 2.4 MiB".
std::string describe(const ModelStateBytes& bytes);

}  // namespace trainer::engine
