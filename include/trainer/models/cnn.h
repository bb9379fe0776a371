// `model=cnn`: a small convolutional network. Each block is a 3x3 convolution (padding 1), batch
// norm, ReLU and 2x2 max pooling; then flatten, Linear to hidden_size, ReLU, dropout and a Linear
// to the class logits. The flattened size is computed from the sample shape.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/modules/container/sequential.h>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"

namespace trainer::models {

struct CnnOptions {
  int64_t in_channels = 1;
  int64_t height = 28;  // of a sample, from the data
  int64_t width = 28;
  std::vector<int64_t> channels{32, 64};  // one conv block each
  int64_t hidden_size = 128;
  int64_t num_classes = 10;
  double dropout = 0.25;

  // Keys: in_channels (must match the data), channels, hidden_size, num_classes, dropout.
  static CnnOptions from_config(const config::ConfigView& model_config, const InputSpec& spec);
};

class Cnn : public Model {
 public:
  // Throws trainer::Error when the image is too small for the number of pooling blocks.
  explicit Cnn(const CnnOptions& options);

  at::Tensor forward(const at::Tensor& inputs) override;
  std::string describe() const override;
  std::vector<PipelineUnit> pipeline_units() override;
  int64_t flops_per_sample() const override { return flops_per_sample_; }
  const CnnOptions& options() const { return options_; }

 private:
  CnnOptions options_;
  int64_t flops_per_sample_ = 0;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Sequential classifier_{nullptr};
};

std::shared_ptr<Model> make_cnn(const config::ConfigView& model_config, const InputSpec& spec);

}  // namespace trainer::models
