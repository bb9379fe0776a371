// A few SGD steps on a fixed batch must reduce the loss of every built-in: the models' gradients
// reach all their parameters and the layers are wired to learn.
#define CATCH_CONFIG_PREFIX_ALL
#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/models/model_registry.h"

namespace {

using trainer::config::ConfigView;
using trainer::config::Node;
using trainer::models::InputSpec;
using trainer::models::Model;

std::shared_ptr<Model> shipped_model(const std::string& name, const InputSpec& spec) {
  Node root = Node::map();
  Node model =
      trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/" + name + ".yaml").root;
  model.set("in_channels", Node::integer(spec.sample_shape[0]));
  if (name == "mlp") model.erase("input_size");
  root.set("model", model);
  return trainer::models::ModelRegistry::global().create(ConfigView(root).sub("model"), spec);
}

double eval_loss(Model& model, const at::Tensor& inputs, const at::Tensor& labels) {
  at::NoGradGuard no_grad;
  model.eval();
  const double loss = at::cross_entropy_loss(model.forward(inputs), labels).item<double>();
  model.train();
  return loss;
}

// Trains `steps` SGD steps on one batch; returns the eval-mode loss before and after.
std::pair<double, double> fit_batch(Model& model, const at::Tensor& inputs, const at::Tensor& labels, int steps,
                                    double lr) {
  const double before = eval_loss(model, inputs, labels);
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(lr).momentum(0.9));
  model.train();
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    at::cross_entropy_loss(model.forward(inputs), labels).backward();
    optimizer.step();
  }
  return {before, eval_loss(model, inputs, labels)};
}

}  // namespace

CATCH_TEST_CASE("mlp and cnn fit a fixed random batch", "[models][training]") {
  torch::manual_seed(0);
  const InputSpec spec{{1, 28, 28}, 10};
  const at::Tensor inputs = at::randn({32, 1, 28, 28});
  const at::Tensor labels = at::randint(0, 10, {32}, at::kLong);
  for (const std::string name : {"mlp", "cnn"}) {
    CATCH_SECTION(name) {
      auto model = shipped_model(name, spec);
      const auto [before, after] = fit_batch(*model, inputs, labels, 15, 0.05);
      CATCH_INFO(name << ": loss " << before << " -> " << after);
      CATCH_CHECK(before > 2.0);  // about ln(10) for an untrained classifier
      CATCH_CHECK(after < 0.5 * before);
    }
  }
}

CATCH_TEST_CASE("resnet18 gets gradients everywhere and learns", "[models][training]") {
  torch::manual_seed(0);
  const InputSpec spec{{3, 32, 32}, 10};
  auto model = shipped_model("resnet", spec);
  const at::Tensor inputs = at::randn({8, 3, 32, 32});
  const at::Tensor labels = at::randint(0, 10, {8}, at::kLong);
  at::cross_entropy_loss(model->forward(inputs), labels).backward();
  for (const auto& parameter : model->named_parameters()) {
    CATCH_INFO(parameter.key());
    CATCH_REQUIRE(parameter.value().grad().defined());
    CATCH_CHECK(parameter.value().grad().abs().sum().item<double>() > 0.0);
  }
  model->zero_grad();
  const auto [before, after] = fit_batch(*model, inputs, labels, 5, 0.05);
  CATCH_INFO("resnet18: loss " << before << " -> " << after);
  CATCH_CHECK(after < before);
}
