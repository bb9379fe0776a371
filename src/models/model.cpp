#include "trainer/models/model.h"

#include <cstdlib>

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

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const at::Tensor& parameter : module.parameters()) count += parameter.numel();
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
