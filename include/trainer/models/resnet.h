// `model=resnet`: ResNet-18/34 (basic blocks) and 50/101/152 (bottlenecks) as in torchvision, but
// with a small-image stem (3x3 conv, stride 1, no max pool) for 28x28 / 32x32 inputs. `width`
// scales every stage's channels (64 -> 64, 128, 256, 512). Kaiming-normal (fan_out) conv init.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"
#include "trainer/models/sync_batch_norm.h"

namespace trainer::models {

struct ResNetOptions {
  int64_t depth = 18;  // 18, 34, 50, 101 or 152
  int64_t in_channels = 1;
  int64_t width = 64;  // channels of the first stage; later stages double it
  int64_t num_classes = 10;
  int64_t image_height = 28;  // only for flops_per_sample
  int64_t image_width = 28;

  // Keys: depth, in_channels (must match the data), width, num_classes.
  static ResNetOptions from_config(const config::ConfigView& model_config, const InputSpec& spec);
};

// The depths ResNet supports, in order.
std::vector<int64_t> resnet_depths();

// A residual block: BasicBlock or Bottleneck (defined in resnet.cpp).
class ResidualBlock : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& inputs) = 0;
};

class ResNet : public Model {
 public:
  // Throws trainer::Error for an unsupported depth.
  explicit ResNet(const ResNetOptions& options);

  at::Tensor forward(const at::Tensor& inputs) override;
  std::string describe() const override;
  // The stem (conv1, bn1), each residual block (layer<stage>.<index>), then pooling and fc.
  std::vector<PipelineUnit> pipeline_units() override;
  int64_t flops_per_sample() const override { return flops_per_sample_; }
  const ResNetOptions& options() const { return options_; }

 private:
  ResNetOptions options_;
  int64_t flops_per_sample_ = 0;
  torch::nn::Conv2d conv1_{nullptr};
  SyncBatchNorm2d bn1_{nullptr};
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;  // all stages in order
  std::vector<std::string> block_names_;                // "layer1.0", ... as registered
  torch::nn::Linear fc_{nullptr};
};

std::shared_ptr<Model> make_resnet(const config::ConfigView& model_config, const InputSpec& spec);

}  // namespace trainer::models
