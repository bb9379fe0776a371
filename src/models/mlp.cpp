#include "trainer/models/mlp.h"

#include <functional>
#include <numeric>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "trainer/models/option_reading.h"
#include "trainer/util/error.h"

namespace trainer::models {

MlpOptions MlpOptions::from_config(const config::ConfigView& model_config, const InputSpec& spec) {
  MlpOptions options;
  const int64_t sample_size =
      std::accumulate(spec.sample_shape.begin(), spec.sample_shape.end(), int64_t{1}, std::multiplies<int64_t>());
  const options::OptionReader r(model_config, "mlp");
  r.get<std::string>("name");
  options.input_size = r.get<std::optional<int64_t>>("input_size").value_or(sample_size);
  if (options.input_size != sample_size) {
    throw Error(option_where(model_config, "input_size"),
                "the mlp model expects " + std::to_string(options.input_size) +
                    " inputs per sample, but the data gives samples of shape " + shape_string(spec.sample_shape) +
                    " = " + std::to_string(sample_size) + " values",
                "Set " + model_config.full_path("input_size") + "=" + std::to_string(sample_size) +
                    " (or remove it to take the data's size)");
  }
  options.hidden_sizes = r.get<std::vector<int64_t>>("hidden_sizes");
  options.num_classes = read_num_classes(r, spec);
  options.dropout = r.get<double>("dropout");
  return options;
}

Mlp::Mlp(const MlpOptions& options) : Model("Mlp"), options_(options) {
  torch::nn::Sequential layers;
  layers->push_back(torch::nn::Flatten());
  int64_t width = options_.input_size;
  for (const int64_t hidden : options_.hidden_sizes) {
    layers->push_back(torch::nn::Linear(width, hidden));
    layers->push_back(torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)));
    if (options_.dropout > 0.0) layers->push_back(torch::nn::Dropout(options_.dropout));
    width = hidden;
  }
  layers->push_back(torch::nn::Linear(width, options_.num_classes));
  layers_ = register_module("layers", layers);
}

at::Tensor Mlp::forward(const at::Tensor& inputs) { return layers_->forward(inputs); }

std::vector<PipelineUnit> Mlp::pipeline_units() { return sequential_units("layers", layers_); }

std::string Mlp::describe() const {
  std::string sizes = std::to_string(options_.input_size);
  for (const int64_t hidden : options_.hidden_sizes) sizes += "-" + std::to_string(hidden);
  sizes += "-" + std::to_string(options_.num_classes);
  return "mlp " + sizes + ": " + with_thousands_separators(parameter_count(*this)) + " parameters";
}

int64_t Mlp::flops_per_sample() const {
  int64_t flops = 0;
  int64_t width = options_.input_size;
  for (const int64_t hidden : options_.hidden_sizes) {
    flops += 2 * width * hidden;
    width = hidden;
  }
  return flops + 2 * width * options_.num_classes;
}

std::shared_ptr<Model> make_mlp(const config::ConfigView& model_config, const InputSpec& spec) {
  return std::make_shared<Mlp>(MlpOptions::from_config(model_config, spec));
}

}  // namespace trainer::models
