// The interface every trainable model implements: a torch::nn::Module whose forward maps a batch
// of samples to class logits, plus the shape of the data it is built for. Built-in models and
// users' own models (registered by name in ModelRegistry) all derive from Model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace trainer::models {

// What the data looks like, so a model can size its first and last layers.
struct InputSpec {
  std::vector<int64_t> sample_shape;  // one sample without the batch dimension, e.g. {1, 28, 28}
  int64_t num_classes = 10;
  // The config keys the data took these from, for errors that name both sides of a mismatch.
  std::string num_classes_key = "data.num_classes";
  std::string channels_key = "data";
};

class Model : public torch::nn::Module {
 public:
  Model() = default;
  explicit Model(std::string name) : torch::nn::Module(std::move(name)) {}

  // inputs [B, sample_shape...] -> logits [B, num_classes].
  virtual at::Tensor forward(const at::Tensor& inputs) = 0;

  // One line for the log: the model's name and its parameter count.
  virtual std::string describe() const;

  // Forward FLOPs of one sample for MFU: the multiply-adds of convolutions and linear layers,
  // 2 FLOPs each (norms, activations and pooling are left out); 0 when unknown.
  virtual int64_t flops_per_sample() const { return 0; }
};

// Number of scalars in all parameters of `module` (recursively).
int64_t parameter_count(const torch::nn::Module& module);

// 11173962 -> "11,173,962".
std::string with_thousands_separators(int64_t value);

// {1, 28, 28} -> "[1, 28, 28]".
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace trainer::models
