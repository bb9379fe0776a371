// `model=mlp`: a multi-layer perceptron. Flattens each sample, then Linear + ReLU (+ dropout) per
// hidden size, then a Linear to the class logits.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/modules/container/sequential.h>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"

namespace trainer::models {

struct MlpOptions {
  int64_t input_size = 784;  // must equal the product of the sample shape
  std::vector<int64_t> hidden_sizes{256, 128};
  int64_t num_classes = 10;
  double dropout = 0.2;  // after each hidden ReLU; 0 leaves the layer out

  // Keys: input_size (default: the sample's size), hidden_sizes, num_classes, dropout.
  static MlpOptions from_config(const config::ConfigView& model_config, const InputSpec& spec);
};

class Mlp : public Model {
 public:
  explicit Mlp(const MlpOptions& options);

  at::Tensor forward(const at::Tensor& inputs) override;
  std::string describe() const override;
  std::vector<PipelineUnit> pipeline_units() override;
  int64_t flops_per_sample() const override;
  const MlpOptions& options() const { return options_; }

 private:
  MlpOptions options_;
  torch::nn::Sequential layers_{nullptr};
};

std::shared_ptr<Model> make_mlp(const config::ConfigView& model_config, const InputSpec& spec);

}  // namespace trainer::models
