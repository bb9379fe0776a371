// model=torchscript: a TorchScript module built and saved here in C++ (no Python needed), loaded
// through the registry and trained in place; train/eval, dtype moves and checkpoints reach it.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/models/torchscript_model.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/csrc/jit/api/module.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/models/model_registry.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::ConfigView;
using trainer::config::Node;
using trainer::models::InputSpec;
using trainer::models::Model;
using trainer::models::ModelRegistry;
using trainer::models::TorchScriptModel;

const InputSpec kFashionMnist{{1, 28, 28}, 10};

// A flat temporary directory. POSIX calls, not std::filesystem: with the 2.11 wheel those bind
// to libtorch.so's own exported copies, whose remove_all crashes.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = "/tmp/trainer_models_test_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    if (DIR* dir = ::opendir(path.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") ::unlink((path + "/" + name).c_str());
      }
      ::closedir(dir);
    }
    ::rmdir(path.c_str());
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

// A linear classifier with a submodule, a buffer and a train/eval difference, written as
// TorchScript source, as torch.jit.script would compile it from Python. (C++ define() has no
// module call sugar: a submodule is called through its forward method.)
torch::jit::Module tiny_scripted_module() {
  // Python's nn.Module always has `training`; a module built in C++ gets it explicitly.
  torch::jit::Module head("Head");
  head.register_attribute("training", c10::BoolType::get(), true);
  head.register_parameter("bias", at::zeros({10}), /*is_buffer=*/false);
  head.define(R"(
def forward(self, x):
    return x + self.bias
)");
  torch::jit::Module module("Tiny");
  module.register_attribute("training", c10::BoolType::get(), true);
  module.register_parameter("weight", at::randn({784, 10}) * 0.01, /*is_buffer=*/false);
  module.register_buffer("scale", at::ones({1}));
  module.register_module("head", head);
  module.define(R"(
def forward(self, x):
    y = self.head.forward(torch.matmul(x.flatten(1), self.weight)) * self.scale
    if self.training:
        y = y + 1.0
    return y
)");
  return module;
}

Node torchscript_config(const std::string& path) {
  Node root = Node::map();
  Node model =
      trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/torchscript.yaml").root;
  model.set("path", Node::string(path));
  root.set("model", model);
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

CATCH_TEST_CASE("a saved TorchScript module trains in place through the registry", "[models][torchscript]") {
  TempDir dir;
  const std::string path = dir.file("tiny.pt");
  tiny_scripted_module().save(path);

  const Node config = torchscript_config(path);
  std::shared_ptr<Model> model = ModelRegistry::global().create(ConfigView(config).sub("model"), kFashionMnist);
  auto* wrapper = dynamic_cast<TorchScriptModel*>(model.get());
  CATCH_REQUIRE(wrapper != nullptr);
  torch::jit::Module& scripted = wrapper->scripted();

  // Parameters and buffers appear under Python's state_dict names.
  const auto parameters = model->named_parameters();
  CATCH_CHECK(parameters.keys() == std::vector<std::string>{"weight", "head.bias"});
  CATCH_CHECK(model->named_buffers().keys() == std::vector<std::string>{"scale"});
  CATCH_CHECK(model->describe() == "torchscript __torch__.Tiny from " + path + ": 7,850 parameters");

  const at::Tensor inputs = at::randn({4, 1, 28, 28});
  model->train();
  const at::Tensor train_out = model->forward(inputs);
  CATCH_CHECK(train_out.sizes().vec() == std::vector<int64_t>{4, 10});
  model->eval();
  CATCH_CHECK(!scripted.is_training());
  CATCH_CHECK(!scripted.attr("head").toModule().is_training());
  CATCH_CHECK(at::allclose(train_out - model->forward(inputs), at::ones({4, 10})));
  model->train();
  CATCH_CHECK(scripted.is_training());

  // One SGD step over model->parameters() changes the scripted module's own tensors.
  const at::Tensor weight_before = scripted.attr("weight").toTensor().clone();
  const at::Tensor bias_before = scripted.attr("head").toModule().attr("bias").toTensor().clone();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  const at::Tensor labels = at::randint(0, 10, {4}, at::kLong);
  const at::Tensor loss_before = at::cross_entropy_loss(model->forward(inputs), labels);
  optimizer.zero_grad();
  loss_before.backward();
  optimizer.step();
  CATCH_CHECK_FALSE(at::equal(scripted.attr("weight").toTensor(), weight_before));
  CATCH_CHECK_FALSE(at::equal(scripted.attr("head").toModule().attr("bias").toTensor(), bias_before));
  const at::Tensor loss_after = at::cross_entropy_loss(model->forward(inputs), labels);
  CATCH_CHECK(loss_after.item<double>() < loss_before.item<double>());

  // A checkpoint of the wrapper restores the scripted module's weights.
  const std::string checkpoint = dir.file("checkpoint.pt");
  {
    torch::serialize::OutputArchive archive;
    model->save(archive);
    archive.save_to(checkpoint);
  }
  const at::Tensor trained = scripted.attr("weight").toTensor().clone();
  {
    at::NoGradGuard no_grad;
    scripted.attr("weight").toTensor().zero_();
  }
  torch::serialize::InputArchive archive;
  archive.load_from(checkpoint);
  model->load(archive);
  CATCH_CHECK(at::equal(scripted.attr("weight").toTensor(), trained));

  // to() moves the scripted module's tensors with the wrapper's (as to(device) would).
  model->to(at::kDouble);
  CATCH_CHECK(scripted.attr("weight").toTensor().scalar_type() == at::kDouble);
  CATCH_CHECK(scripted.attr("scale").toTensor().scalar_type() == at::kDouble);
  CATCH_CHECK(model->forward(inputs.to(at::kDouble)).scalar_type() == at::kDouble);
}

CATCH_TEST_CASE("frozen parameters of a scripted module stay frozen", "[models][torchscript]") {
  // As Python saves a module whose head was frozen with requires_grad_(False).
  torch::jit::Module module = tiny_scripted_module();
  module.attr("weight").toTensor().set_requires_grad(true);
  TorchScriptModel model(module);
  CATCH_CHECK(model.named_parameters()["weight"].requires_grad());
  CATCH_CHECK_FALSE(model.named_parameters()["head.bias"].requires_grad());

  // Nothing trainable at all (as a module built in C++ is saved): everything becomes trainable.
  TorchScriptModel all_frozen(tiny_scripted_module());
  for (const at::Tensor& parameter : all_frozen.parameters()) {
    CATCH_CHECK(parameter.requires_grad());
  }
}

CATCH_TEST_CASE("a module without a training flag can still switch modes", "[models][torchscript]") {
  torch::jit::Module plain("Plain");
  plain.register_parameter("weight", at::ones({784, 10}), /*is_buffer=*/false);
  plain.define(R"(
def forward(self, x):
    return torch.matmul(x.flatten(1), self.weight)
)");
  TorchScriptModel model(plain);
  model.eval();
  CATCH_CHECK_FALSE(model.is_training());
  CATCH_CHECK(model.forward(at::ones({1, 1, 28, 28})).sum().item<double>() == 7840.0);
}

CATCH_TEST_CASE("torchscript errors name the file and say how to fix", "[models][torchscript]") {
  TempDir dir;
  const std::string missing = dir.file("nope.pt");
  const Node missing_config = torchscript_config(missing);
  const std::string no_file =
      error_of([&] { ModelRegistry::global().create(ConfigView(missing_config).sub("model"), kFashionMnist); });
  CATCH_CHECK_THAT(no_file, Catch::Contains("no TorchScript file at '" + missing + "'"));
  CATCH_CHECK_THAT(no_file, Catch::Contains("torch.jit.script(model).save(path)"));

  const std::string garbage = dir.file("garbage.pt");
  std::ofstream(garbage) << "not a zip archive";
  const Node garbage_config = torchscript_config(garbage);
  CATCH_CHECK_THAT(
      error_of([&] { ModelRegistry::global().create(ConfigView(garbage_config).sub("model"), kFashionMnist); }),
      Catch::Contains("cannot load this file as a TorchScript module"));

  // A model saved for other data fails at creation, not in the loss.
  const std::string path = dir.file("tiny.pt");
  tiny_scripted_module().save(path);
  const Node config = torchscript_config(path);
  const std::string classes = error_of([&] {
    ModelRegistry::global().create(ConfigView(config).sub("model"), {{1, 28, 28}, 5});
  });
  CATCH_CHECK_THAT(classes, Catch::Contains("returns shape [2, 10]"));
  CATCH_CHECK_THAT(classes, Catch::Contains("expected [2, 5]"));
  const std::string shape = error_of([&] {
    ModelRegistry::global().create(ConfigView(config).sub("model"), {{3, 32, 32}, 10});
  });
  CATCH_CHECK_THAT(shape, Catch::Contains("fails on a batch of shape [2, 3, 32, 32]"));

  const Node unset =
      trainer::config::load_yaml_string("model:\n  name: torchscript\n  path: ???\n", "config.yaml").root;
  CATCH_CHECK_THAT(error_of([&] { ModelRegistry::global().create(ConfigView(unset).sub("model"), kFashionMnist); }),
                   Catch::Contains("model.path"));
}
