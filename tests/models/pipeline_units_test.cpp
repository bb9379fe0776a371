// The built-in models cut for a pipeline (trainer.strategy=pipeline): their pieces, run in turn,
// are the model's forward; every parameter belongs to exactly one piece; the cuts balance the
// parameters or fall at the named modules, and the errors name the key and the names to use.
#define CATCH_CONFIG_PREFIX_ALL
#include <functional>
#include <set>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/utils.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/models/model_registry.h"
#include "trainer/models/pipeline_split.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::ConfigView;
using trainer::config::Node;
using trainer::models::InputSpec;
using trainer::models::Model;
using trainer::models::PipelineUnit;

std::shared_ptr<Model> create(const std::string& name, const std::string& overrides_yaml, const InputSpec& spec) {
  Node model =
      trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/" + name + ".yaml").root;
  if (!overrides_yaml.empty()) {
    const Node extra = trainer::config::load_yaml_string(overrides_yaml, "test").root;
    for (const auto& entry : extra.entries()) model.set(entry.key, entry.value);
  }
  Node root = Node::map();
  root.set("model", model);
  return trainer::models::ModelRegistry::global().create(ConfigView(root).sub("model"), spec);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "<no error>";
}

// The pieces applied in turn give forward's output, and own every parameter once.
void check_pieces(Model& model, const at::Tensor& input) {
  torch::NoGradGuard no_grad;
  model.eval();
  const std::vector<PipelineUnit> units = model.pipeline_units();
  CATCH_REQUIRE(units.size() >= 2);
  at::Tensor x = input;
  for (const PipelineUnit& unit : units) x = unit.forward(x);
  const at::Tensor whole = model.forward(input);
  CATCH_CHECK(x.sizes() == whole.sizes());
  CATCH_CHECK(at::allclose(x, whole));
  std::set<const void*> owned;
  size_t count = 0;
  for (const PipelineUnit& unit : units) {
    for (const auto& [name, module] : unit.modules) {
      for (const at::Tensor& p : module->parameters()) {
        owned.insert(p.unsafeGetTensorImpl());
        ++count;
      }
    }
  }
  CATCH_CHECK(count == owned.size());  // no parameter in two pieces
  CATCH_CHECK(owned.size() == model.parameters().size());
}

}  // namespace

CATCH_TEST_CASE("mlp, cnn and resnet: the pieces are the forward and own every parameter once", "[models][pipeline]") {
  at::manual_seed(0);
  const InputSpec fashion{{1, 28, 28}, 10};
  const at::Tensor images = at::randn({3, 1, 28, 28});
  auto mlp = create("mlp", "", fashion);
  check_pieces(*mlp, images);
  auto cnn = create("cnn", "", fashion);
  check_pieces(*cnn, images);
  auto resnet = create("resnet", "{depth: 18, width: 8}", fashion);
  check_pieces(*resnet, images);
  // Names as the module tree names them: what split_points takes.
  std::vector<std::string> names;
  for (const PipelineUnit& unit : resnet->pipeline_units()) names.push_back(unit.name);
  CATCH_CHECK(names.front() == "conv1");
  CATCH_CHECK(names[1] == "layer1.0");
  CATCH_CHECK(names.back() == "fc");
  CATCH_CHECK(names.size() == 10);  // stem, 8 basic blocks, fc
  std::vector<std::string> mlp_names;
  for (const PipelineUnit& unit : mlp->pipeline_units()) mlp_names.push_back(unit.name);
  CATCH_CHECK(mlp_names == std::vector<std::string>{"layers.0", "layers.1", "layers.2", "layers.3", "layers.4",
                                                    "layers.5", "layers.6", "layers.7"});
}

CATCH_TEST_CASE("balanced by parameters: the largest stage is as small as can be, layers keep their activations",
                "[models][pipeline]") {
  using trainer::models::split_by_parameters;
  // The mlp 784-256-128-10: flatten, linear, relu, dropout, linear, relu, dropout, linear.
  const std::vector<int64_t> mlp{0, 200960, 0, 0, 32896, 0, 0, 1290};
  CATCH_CHECK(split_by_parameters(mlp, 2, "mlp") == std::vector<size_t>{0, 4});
  CATCH_CHECK(split_by_parameters(mlp, 3, "mlp") == std::vector<size_t>{0, 4, 7});
  CATCH_CHECK(split_by_parameters({5, 5, 5, 5}, 2, "m") == std::vector<size_t>{0, 2});
  CATCH_CHECK(split_by_parameters({1, 1, 1, 9}, 2, "m") == std::vector<size_t>{0, 3});
  CATCH_CHECK(split_by_parameters({3, 3, 3}, 3, "m") == std::vector<size_t>{0, 1, 2});
  const std::string few = error_of([] { split_by_parameters({1, 2}, 3, "tiny"); });
  CATCH_CHECK(few.find("trainer.pipeline.stages") != std::string::npos);
  CATCH_CHECK(few.find("2 pieces at most") != std::string::npos);
}

CATCH_TEST_CASE("split points: module names in forward order; a wrong one lists the names to use",
                "[models][pipeline]") {
  using trainer::models::split_at_names;
  const std::vector<std::string> names{"conv1", "layer1.0", "layer1.1", "layer2.0", "fc"};
  CATCH_CHECK(split_at_names(names, {"layer2.0"}, "resnet") == std::vector<size_t>{0, 3});
  CATCH_CHECK(split_at_names(names, {"layer1.1", "fc"}, "resnet") == std::vector<size_t>{0, 2, 4});
  const std::string typo = error_of([&] { split_at_names(names, {"layer2.O"}, "resnet"); });
  CATCH_CHECK(typo.find("trainer.pipeline.split_points") != std::string::npos);
  CATCH_CHECK(typo.find("'layer2.O' is not a module where the resnet model can be cut") != std::string::npos);
  CATCH_CHECK(typo.find("layer1.0, layer1.1, layer2.0, fc") != std::string::npos);
  const std::string order = error_of([&] { split_at_names(names, {"layer2.0", "layer1.0"}, "resnet"); });
  CATCH_CHECK(order.find("does not come after 'layer2.0'") != std::string::npos);
  const std::string first = error_of([&] { split_at_names(names, {"conv1"}, "resnet"); });
  CATCH_CHECK(first.find("where the resnet model begins") != std::string::npos);
  // A did-you-mean names a point where a stage may start, never the first module.
  const std::vector<std::string> mlp{"layers.0", "layers.1", "layers.2"};
  const std::string past = error_of([&] { split_at_names(mlp, {"layers.9"}, "mlp"); });
  CATCH_CHECK(past.find("layers.0'") == std::string::npos);
  CATCH_CHECK(past.find("Did you mean 'layers.1'") != std::string::npos);
}
