// The interface every trainable model implements: a torch::nn::Module whose forward maps a batch
// of samples to class logits, plus the shape of the data it is built for. Built-in models and
// users' own models (registered by name in ModelRegistry) all derive from Model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>

namespace trainer::models {

// What the data looks like, so a model can size its first and last layers.
struct InputSpec {
  std::vector<int64_t> sample_shape;  // one sample without the batch dimension, e.g. {1, 28, 28}
  int64_t num_classes = 10;
  // The config keys the data took these from, for errors that name both sides of a mismatch.
  std::string num_classes_key = "data.num_classes";
  std::string channels_key = "data";
};

// One piece of a model cut for pipeline parallelism (trainer.strategy=pipeline): pieces run in
// turn, each on the previous one's output, and together they are the model's forward. `name` is
// the module name where the piece starts ("layers.4", "layer2.0", "fc"): what
// trainer.pipeline.split_points names. `modules` own its parameters and buffers, by their names.
struct PipelineUnit {
  std::string name;
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> modules;
  std::function<at::Tensor(const at::Tensor&)> forward;
};

// The pieces of a Sequential registered as `prefix`: one per child, named <prefix>.<index>.
std::vector<PipelineUnit> sequential_units(const std::string& prefix, const torch::nn::Sequential& sequential);

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

  // The model as pieces for a pipeline, in forward order; empty when it cannot be cut (then
  // trainer.strategy=pipeline refuses it, naming the model).
  virtual std::vector<PipelineUnit> pipeline_units() { return {}; }

  // For a model whose code is a file (TorchScript): a fingerprint of that file as loaded
  // ("fnv1a64 <hex>, <n> bytes"), kept in each checkpoint so that an evaluation or resume can tell
  // when the file changed since; empty for a model built from the config alone.
  virtual std::string source_fingerprint() const { return {}; }
};

// The module's parameters, each once: a tensor shared by two layers (tied weights, a layer
// registered under two names) is listed at its first name only, as Python's Module.parameters()
// gives it, so the optimizer steps it once a batch and the counts hold it once.
std::vector<at::Tensor> unique_parameters(const torch::nn::Module& module);

// The values of a module's buffers (batch norm's running statistics and counts), put back when
// it goes: the start-up probes (a forward on a batch of zeros, for the output shape, the FLOP
// count and the precision check) would otherwise move them, and a model traced in training mode
// updates them whatever train()/eval() say (one sample's variance is NaN).
class BufferSnapshot {
 public:
  explicit BufferSnapshot(const torch::nn::Module& module);
  ~BufferSnapshot();
  BufferSnapshot(const BufferSnapshot&) = delete;
  BufferSnapshot& operator=(const BufferSnapshot&) = delete;

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> saved_;  // the buffer, its value before
};

// Number of scalars in all parameters of `module` (recursively), a shared one once.
int64_t parameter_count(const torch::nn::Module& module);

// 11173962 -> "11,173,962".
std::string with_thousands_separators(int64_t value);

// {1, 28, 28} -> "[1, 28, 28]".
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace trainer::models
