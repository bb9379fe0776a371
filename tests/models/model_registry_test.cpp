// ModelRegistry: built-ins present, a user's model registered with TRAINER_REGISTER_MODEL (as a
// user's own binary would), unknown names with a suggestion, duplicate names refused.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/models/model_registry.h"

#include <numeric>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/nn/modules/linear.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::ConfigView;
using trainer::config::Node;
using trainer::models::InputSpec;
using trainer::models::Model;
using trainer::models::ModelRegistry;

// A user's model: logistic regression with a configurable scale on the logits.
class ScaledLinear : public Model {
 public:
  ScaledLinear(int64_t inputs, int64_t classes, double scale)
      : Model("ScaledLinear"), linear_(register_module("linear", torch::nn::Linear(inputs, classes))), scale_(scale) {}
  at::Tensor forward(const at::Tensor& inputs) override { return linear_->forward(inputs.flatten(1)) * scale_; }
  double scale() const { return scale_; }

 private:
  torch::nn::Linear linear_;
  double scale_;
};

std::shared_ptr<Model> make_scaled_linear(const ConfigView& config, const InputSpec& spec) {
  const int64_t inputs =
      std::accumulate(spec.sample_shape.begin(), spec.sample_shape.end(), int64_t{1}, std::multiplies<int64_t>());
  return std::make_shared<ScaledLinear>(inputs, spec.num_classes, config.get<double>("scale"));
}

}  // namespace

TRAINER_REGISTER_MODEL("scaled_linear", make_scaled_linear);

namespace {

Node model_section(const std::string& yaml) {
  Node root = Node::map();
  root.set("model", trainer::config::load_yaml_string(yaml, "configs/model/test.yaml").root);
  return root;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

CATCH_TEST_CASE("registry lists the built-ins and the macro-registered model", "[models][registry]") {
  const std::vector<std::string> names = ModelRegistry::global().names();
  CATCH_CHECK(names == std::vector<std::string>{"cnn", "mlp", "resnet", "scaled_linear", "torchscript"});
}

CATCH_TEST_CASE("a user's model is created from its config", "[models][registry]") {
  const Node root = model_section("name: scaled_linear\nscale: 0.5\n");
  auto model = ModelRegistry::global().create(ConfigView(root).sub("model"), {{1, 28, 28}, 7});
  auto* scaled = dynamic_cast<ScaledLinear*>(model.get());
  CATCH_REQUIRE(scaled != nullptr);
  CATCH_CHECK(scaled->scale() == 0.5);
  CATCH_CHECK(model->forward(at::zeros({3, 1, 28, 28})).sizes().vec() == std::vector<int64_t>{3, 7});
  CATCH_CHECK(model->describe() == "ScaledLinear: 5,495 parameters");  // 784*7+7

  // Its own keys are read through ConfigView, so their errors name the path.
  const Node missing = model_section("name: scaled_linear\n");
  CATCH_CHECK_THAT(error_of([&] {
                     ModelRegistry::global().create(ConfigView(missing).sub("model"), {{4}, 2});
                   }),
                   Catch::Contains("model.scale"));
}

CATCH_TEST_CASE("an unknown model name suggests the closest", "[models][registry]") {
  const Node root = model_section("name: mpl\n");
  const std::string message = error_of([&] {
    ModelRegistry::global().create(ConfigView(root).sub("model"), {{1, 28, 28}, 10});
  });
  CATCH_CHECK_THAT(message, Catch::StartsWith("configs/model/test.yaml:1"));
  CATCH_CHECK_THAT(message, Catch::Contains("unknown model 'mpl'"));
  CATCH_CHECK_THAT(message, Catch::Contains("Did you mean 'mlp'?"));
  CATCH_CHECK_THAT(message, Catch::Contains("cnn, mlp, resnet, scaled_linear, torchscript"));

  const Node far = model_section("name: transformer\n");
  CATCH_CHECK_THAT(error_of([&] {
                     ModelRegistry::global().create(ConfigView(far).sub("model"), {{4}, 2});
                   }),
                   !Catch::Contains("Did you mean"));

  const Node nameless = model_section("depth: 18\n");
  CATCH_CHECK_THAT(error_of([&] {
                     ModelRegistry::global().create(ConfigView(nameless).sub("model"), {{4}, 2});
                   }),
                   Catch::Contains("model.name"));
}

CATCH_TEST_CASE("names are taken once; a registry can be private", "[models][registry]") {
  CATCH_CHECK_THAT(error_of([] { ModelRegistry::global().add("mlp", make_scaled_linear); }),
                   Catch::Contains("'mlp' is already registered"));
  CATCH_CHECK_THAT(error_of([] { ModelRegistry::global().add("empty", nullptr); }),
                   Catch::Contains("factory for model 'empty' is empty"));

  ModelRegistry own;
  CATCH_CHECK(own.names().empty());
  trainer::models::register_builtin_models(own);
  CATCH_CHECK(own.contains("resnet"));
  CATCH_CHECK_FALSE(own.contains("scaled_linear"));

  // A factory returning null is reported rather than handed to the trainer.
  own.add("broken", [](const ConfigView&, const InputSpec&) { return std::shared_ptr<Model>(); });
  const Node root = model_section("name: broken\n");
  CATCH_CHECK_THAT(error_of([&] {
                     own.create(ConfigView(root).sub("model"), {{4}, 2});
                   }),
                   Catch::Contains("returned no model"));
}
