#include "trainer/engine/precision/cast_floating_tensors.h"

#include <torch/types.h>
#include <torch/utils.h>

namespace trainer::engine {

void cast_floating_tensors(torch::nn::Module& module, at::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  auto cast = [dtype](at::Tensor tensor) {
    if (tensor.defined() && tensor.is_floating_point() && tensor.scalar_type() != dtype) {
      tensor.set_data(tensor.to(dtype));
    }
  };
  for (const auto& parameter : module.named_parameters(/*recurse=*/true)) cast(parameter.value());
  for (const auto& buffer : module.named_buffers(/*recurse=*/true)) cast(buffer.value());
}

}  // namespace trainer::engine
