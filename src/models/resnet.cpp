#include "trainer/models/resnet.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>

#include "trainer/models/option_reading.h"
#include "trainer/util/error.h"

namespace trainer::models {
namespace {

struct Layout {
  bool bottleneck;
  std::vector<int64_t> blocks_per_stage;
};

// The stage layouts of the ResNet paper (He et al. 2015, table 1).
bool layout_for(int64_t depth, Layout& layout) {
  switch (depth) {
    case 18:
      layout = {false, {2, 2, 2, 2}};
      return true;
    case 34:
      layout = {false, {3, 4, 6, 3}};
      return true;
    case 50:
      layout = {true, {3, 4, 6, 3}};
      return true;
    case 101:
      layout = {true, {3, 4, 23, 3}};
      return true;
    case 152:
      layout = {true, {3, 8, 36, 3}};
      return true;
    default:
      return false;
  }
}

std::string depth_list() {
  std::string text;
  for (const int64_t depth : resnet_depths()) {
    text += (text.empty() ? "" : ", ") + std::to_string(depth);
  }
  return text;
}

int64_t conv_out(int64_t size, int64_t kernel, int64_t stride, int64_t padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

// Tracks the feature map through the network to count FLOPs (2 per multiply-add).
struct FlopCounter {
  int64_t height;
  int64_t width;
  int64_t flops = 0;

  // Adds a conv from the current map and returns the output (height, width) without moving on.
  std::pair<int64_t, int64_t> conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, int64_t h,
                                   int64_t w) {
    const int64_t oh = conv_out(h, kernel, stride, padding);
    const int64_t ow = conv_out(w, kernel, stride, padding);
    flops += 2 * in * out * kernel * kernel * oh * ow;
    return {oh, ow};
  }
};

torch::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  // Bias-free: every conv is followed by batch norm, whose shift makes a bias redundant.
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

torch::nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// 1x1 conv + batch norm on the shortcut when the block changes the shape; null otherwise.
torch::nn::Sequential make_downsample(int64_t in, int64_t out, int64_t stride, FlopCounter& counter) {
  if (stride == 1 && in == out) return torch::nn::Sequential(nullptr);
  counter.conv(in, out, 1, stride, 0, counter.height, counter.width);
  return torch::nn::Sequential(conv1x1(in, out, stride), SyncBatchNorm2d(out));
}

// What both blocks share: the shortcut (the input, or a downsample of it when the block changes
// the shape) added to the block's output before the last ReLU.
class ShortcutBlock : public ResidualBlock {
 protected:
  // Registered after the block's own layers, as torchvision does (the checkpoints' names).
  void add_downsample(int64_t in, int64_t out, int64_t stride, FlopCounter& counter) {
    downsample_ = make_downsample(in, out, stride, counter);
    if (downsample_) register_module("downsample", downsample_);
  }

  at::Tensor add_shortcut(at::Tensor out, const at::Tensor& inputs) {
    out += downsample_ ? downsample_->forward(inputs) : inputs;
    return out.relu_();
  }

 private:
  torch::nn::Sequential downsample_{nullptr};
};

class BasicBlock : public ShortcutBlock {
 public:
  static constexpr int64_t kExpansion = 1;

  BasicBlock(int64_t in, int64_t planes, int64_t stride, FlopCounter& counter)
      : conv1_(register_module("conv1", conv3x3(in, planes, stride))),
        bn1_(register_module("bn1", SyncBatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, 1))),
        bn2_(register_module("bn2", SyncBatchNorm2d(planes))) {
    add_downsample(in, planes, stride, counter);
    auto [h, w] = counter.conv(in, planes, 3, stride, 1, counter.height, counter.width);
    counter.conv(planes, planes, 3, 1, 1, h, w);
    counter.height = h;
    counter.width = w;
  }

  at::Tensor forward(const at::Tensor& inputs) override {
    at::Tensor out = bn1_->forward(conv1_->forward(inputs)).relu_();
    return add_shortcut(bn2_->forward(conv2_->forward(out)), inputs);
  }

 private:
  torch::nn::Conv2d conv1_;
  SyncBatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  SyncBatchNorm2d bn2_;
};

// torchvision's "ResNet v1.5" bottleneck: the stride sits on the 3x3 conv, not the first 1x1.
class Bottleneck : public ShortcutBlock {
 public:
  static constexpr int64_t kExpansion = 4;

  Bottleneck(int64_t in, int64_t planes, int64_t stride, FlopCounter& counter)
      : conv1_(register_module("conv1", conv1x1(in, planes, 1))),
        bn1_(register_module("bn1", SyncBatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, stride))),
        bn2_(register_module("bn2", SyncBatchNorm2d(planes))),
        conv3_(register_module("conv3", conv1x1(planes, planes * kExpansion, 1))),
        bn3_(register_module("bn3", SyncBatchNorm2d(planes * kExpansion))) {
    add_downsample(in, planes * kExpansion, stride, counter);
    counter.conv(in, planes, 1, 1, 0, counter.height, counter.width);
    auto [h, w] = counter.conv(planes, planes, 3, stride, 1, counter.height, counter.width);
    counter.conv(planes, planes * kExpansion, 1, 1, 0, h, w);
    counter.height = h;
    counter.width = w;
  }

  at::Tensor forward(const at::Tensor& inputs) override {
    at::Tensor out = bn1_->forward(conv1_->forward(inputs)).relu_();
    out = bn2_->forward(conv2_->forward(out)).relu_();
    return add_shortcut(bn3_->forward(conv3_->forward(out)), inputs);
  }

 private:
  torch::nn::Conv2d conv1_;
  SyncBatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  SyncBatchNorm2d bn2_;
  torch::nn::Conv2d conv3_;
  SyncBatchNorm2d bn3_;
};

}  // namespace

std::vector<int64_t> resnet_depths() { return {18, 34, 50, 101, 152}; }

ResNetOptions ResNetOptions::from_config(const config::ConfigView& model_config, const InputSpec& spec) {
  ResNetOptions options;
  const options::OptionReader r(model_config, "resnet");
  r.get<std::string>("name");
  options.depth = std::stoll(r.choice("depth"));
  Layout layout;
  if (!layout_for(options.depth, layout)) {
    throw Error(option_where(model_config, "depth"), "resnet has no depth " + std::to_string(options.depth),
                "Set " + model_config.full_path("depth") + " to one of " + depth_list());
  }
  options.in_channels = read_in_channels(r, spec, "resnet");
  options.width = r.get<int64_t>("width");
  options.num_classes = read_num_classes(r, spec);
  options.image_height = spec.sample_shape[1];
  options.image_width = spec.sample_shape[2];
  return options;
}

ResNet::ResNet(const ResNetOptions& options) : Model("ResNet"), options_(options) {
  Layout layout;
  if (!layout_for(options_.depth, layout)) {
    throw Error("resnet", "no depth " + std::to_string(options_.depth), "Use one of " + depth_list());
  }
  FlopCounter counter{options_.image_height, options_.image_width};
  conv1_ = register_module("conv1", conv3x3(options_.in_channels, options_.width, 1));
  bn1_ = register_module("bn1", SyncBatchNorm2d(options_.width));
  counter.conv(options_.in_channels, options_.width, 3, 1, 1, counter.height, counter.width);

  const int64_t expansion = layout.bottleneck ? Bottleneck::kExpansion : BasicBlock::kExpansion;
  int64_t channels = options_.width;
  for (size_t stage = 0; stage < layout.blocks_per_stage.size(); ++stage) {
    const int64_t planes = options_.width << stage;
    torch::nn::ModuleList blocks;
    for (int64_t i = 0; i < layout.blocks_per_stage[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      std::shared_ptr<ResidualBlock> block;
      if (layout.bottleneck) {
        block = std::make_shared<Bottleneck>(channels, planes, stride, counter);
      } else {
        block = std::make_shared<BasicBlock>(channels, planes, stride, counter);
      }
      blocks->push_back(block);
      blocks_.push_back(block);
      block_names_.push_back("layer" + std::to_string(stage + 1) + "." + std::to_string(i));
      channels = planes * expansion;
    }
    register_module("layer" + std::to_string(stage + 1), blocks);
  }
  fc_ = register_module("fc", torch::nn::Linear(channels, options_.num_classes));
  counter.flops += 2 * channels * options_.num_classes;
  flops_per_sample_ = counter.flops;

  // As torchvision: Kaiming-normal convs for ReLU nets (fan_out), batch norm scale 1 and shift 0
  // (LibTorch's default too), Linear left at its default (Kaiming-uniform, a = sqrt(5)).
  for (const std::shared_ptr<torch::nn::Module>& module : modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    }
  }
}

at::Tensor ResNet::forward(const at::Tensor& inputs) {
  at::Tensor out = bn1_->forward(conv1_->forward(inputs)).relu_();
  for (const std::shared_ptr<ResidualBlock>& block : blocks_) out = block->forward(out);
  // Global average pooling: the same as an adaptive average pool to 1x1, then flatten.
  return fc_->forward(out.mean({2, 3}));
}

std::vector<PipelineUnit> ResNet::pipeline_units() {
  std::vector<PipelineUnit> units;
  units.push_back(
      {"conv1",
       {{"conv1", conv1_.ptr()}, {"bn1", bn1_.ptr()}},
       [conv1 = conv1_, bn1 = bn1_](const at::Tensor& x) mutable { return bn1->forward(conv1->forward(x)).relu_(); }});
  for (size_t i = 0; i < blocks_.size(); ++i) {
    units.push_back({block_names_[i], {{block_names_[i], blocks_[i]}}, [block = blocks_[i]](const at::Tensor& x) {
                       return block->forward(x);
                     }});
  }
  units.push_back({"fc", {{"fc", fc_.ptr()}}, [fc = fc_](const at::Tensor& x) mutable {
                     return fc->forward(x.mean({2, 3}));
                   }});
  return units;
}

std::string ResNet::describe() const {
  return "resnet" + std::to_string(options_.depth) + " (width " + std::to_string(options_.width) +
         ", small-image stem): " + with_thousands_separators(parameter_count(*this)) + " parameters";
}

std::shared_ptr<Model> make_resnet(const config::ConfigView& model_config, const InputSpec& spec) {
  return std::make_shared<ResNet>(ResNetOptions::from_config(model_config, spec));
}

}  // namespace trainer::models
