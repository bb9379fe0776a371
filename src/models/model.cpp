#include "trainer/models/model.h"

#include <cstdlib>
#include <unordered_set>

#include <ATen/core/grad_mode.h>

namespace trainer::models {

std::string Model::describe() const {
  return name() + ": " + with_thousands_separators(parameter_count(*this)) + " parameters";
}

std::vector<PipelineUnit> sequential_units(const std::string& prefix, const torch::nn::Sequential& sequential) {
  std::vector<PipelineUnit> units;
  for (size_t i = 0; i < sequential->size(); ++i) {
    const std::string name = prefix + "." + std::to_string(i);
    units.push_back({name,
                     {{name, sequential->ptr(i)}},
                     [modules = torch::nn::Sequential(sequential), i](const at::Tensor& x) mutable {
                       return (modules->begin() + static_cast<std::ptrdiff_t>(i))->forward(x);
                     }});
  }
  return units;
}

std::vector<at::Tensor> unique_parameters(const torch::nn::Module& module) {
  std::vector<at::Tensor> unique;
  std::unordered_set<const c10::TensorImpl*> seen;
  for (const at::Tensor& parameter : module.parameters()) {
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) unique.push_back(parameter);
  }
  return unique;
}

BufferSnapshot::BufferSnapshot(const torch::nn::Module& module) {
  const at::NoGradGuard no_grad;
  for (const at::Tensor& buffer : module.buffers()) {
    if (buffer.defined()) saved_.emplace_back(buffer, buffer.clone());
  }
}

BufferSnapshot::~BufferSnapshot() {
  const at::NoGradGuard no_grad;
  for (auto& [buffer, value] : saved_) buffer.copy_(value);
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const at::Tensor& parameter : unique_parameters(module)) count += parameter.numel();
  return count;
}

std::string with_thousands_separators(int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace trainer::models
