#include "trainer/models/cnn.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "trainer/models/option_reading.h"
#include "trainer/models/sync_batch_norm.h"
#include "trainer/util/error.h"

namespace trainer::models {

CnnOptions CnnOptions::from_config(const config::ConfigView& model_config, const InputSpec& spec) {
  CnnOptions options;
  const options::OptionReader r(model_config, "cnn");
  r.get<std::string>("name");
  options.in_channels = read_in_channels(r, spec, "cnn");
  options.height = spec.sample_shape[1];
  options.width = spec.sample_shape[2];
  options.channels = r.get<std::vector<int64_t>>("channels");
  options.hidden_size = r.get<int64_t>("hidden_size");
  options.num_classes = read_num_classes(r, spec);
  options.dropout = r.get<double>("dropout");
  // Each block halves the image (rounding down); it must not vanish.
  int64_t height = options.height;
  int64_t width = options.width;
  for (size_t i = 0; i < options.channels.size(); ++i) {
    height /= 2;
    width /= 2;
    if (height < 1 || width < 1) {
      throw Error(option_where(model_config, "channels"),
                  "the cnn model has " + std::to_string(options.channels.size()) +
                      " conv blocks, each halving the image, but the data's " + std::to_string(options.height) + "x" +
                      std::to_string(options.width) + " images vanish after " + std::to_string(i + 1),
                  "Use at most " + std::to_string(i) + " entries in " + model_config.full_path("channels"));
    }
  }
  return options;
}

Cnn::Cnn(const CnnOptions& options) : Model("Cnn"), options_(options) {
  torch::nn::Sequential features;
  int64_t channels = options_.in_channels;
  int64_t height = options_.height;
  int64_t width = options_.width;
  for (const int64_t out : options_.channels) {
    // No conv bias: the batch norm right after it has its own shift.
    features->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, out, 3).padding(1).bias(false)));
    features->push_back(SyncBatchNorm2d(out));  // plain batch norm unless synchronised
    features->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
    features->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
    flops_per_sample_ += 2 * channels * 9 * out * height * width;
    channels = out;
    height /= 2;
    width /= 2;
  }
  if (height < 1 || width < 1) {
    throw Error("cnn", "the image is too small for " + std::to_string(options_.channels.size()) + " pooling blocks",
                "Use fewer conv blocks");
  }
  const int64_t flat = channels * height * width;
  torch::nn::Sequential classifier;
  classifier->push_back(torch::nn::Flatten());
  classifier->push_back(torch::nn::Linear(flat, options_.hidden_size));
  classifier->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
  if (options_.dropout > 0.0) classifier->push_back(torch::nn::Dropout(options_.dropout));
  classifier->push_back(torch::nn::Linear(options_.hidden_size, options_.num_classes));
  flops_per_sample_ += 2 * flat * options_.hidden_size + 2 * options_.hidden_size * options_.num_classes;
  features_ = register_module("features", features);
  classifier_ = register_module("classifier", classifier);
}

at::Tensor Cnn::forward(const at::Tensor& inputs) { return classifier_->forward(features_->forward(inputs)); }

std::vector<PipelineUnit> Cnn::pipeline_units() {
  std::vector<PipelineUnit> units = sequential_units("features", features_);
  for (PipelineUnit& unit : sequential_units("classifier", classifier_)) units.push_back(std::move(unit));
  return units;
}

std::string Cnn::describe() const {
  std::string channels;
  for (const int64_t c : options_.channels) channels += (channels.empty() ? "" : ",") + std::to_string(c);
  return "cnn (channels " + channels + ", hidden " + std::to_string(options_.hidden_size) +
         "): " + with_thousands_separators(parameter_count(*this)) + " parameters";
}

std::shared_ptr<Model> make_cnn(const config::ConfigView& model_config, const InputSpec& spec) {
  return std::make_shared<Cnn>(CnnOptions::from_config(model_config, spec));
}

}  // namespace trainer::models
