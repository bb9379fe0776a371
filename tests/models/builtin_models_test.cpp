// The built-in models (mlp, cnn, resnet) built through the registry from the shipped
// configs/model/*.yaml: output shapes, parameter counts, FLOPs and the errors users see.
#define CATCH_CONFIG_PREFIX_ALL
#include <functional>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

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

const InputSpec kFashionMnist{{1, 28, 28}, 10};
const InputSpec kCifar{{3, 32, 32}, 10};

// The shipped config of a model, as `model=<name>` would compose it.
Node shipped_config(const std::string& name) {
  return trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/" + name + ".yaml").root;
}

// As the engine does: the `model` section of a whole config.
std::shared_ptr<Model> create(const Node& model_config, const InputSpec& spec) {
  Node root = Node::map();
  root.set("model", model_config);
  return ModelRegistry::global().create(ConfigView(root).sub("model"), spec);
}

// The message of the trainer::Error `action` throws, or "<no error>".
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::vector<int64_t> logits_shape(Model& model, const InputSpec& spec) {
  std::vector<int64_t> shape{4};
  shape.insert(shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
  model.eval();
  return model.forward(at::randn(shape)).sizes().vec();
}

}  // namespace

CATCH_TEST_CASE("mlp: shipped config on Fashion-MNIST", "[models][mlp]") {
  const Node config = shipped_config("mlp");
  auto model = create(config, kFashionMnist);
  CATCH_CHECK(logits_shape(*model, kFashionMnist) == std::vector<int64_t>{4, 10});
  // 784*256+256 + 256*128+128 + 128*10+10.
  CATCH_CHECK(trainer::models::parameter_count(*model) == 235146);
  CATCH_CHECK(model->flops_per_sample() == 2 * (784 * 256 + 256 * 128 + 128 * 10));
  CATCH_CHECK(model->describe() == "mlp 784-256-128-10: 235,146 parameters");
}

CATCH_TEST_CASE("mlp: input_size must match the data", "[models][mlp]") {
  // The shipped config takes the data's size (input_size: null)...
  CATCH_CHECK(logits_shape(*create(shipped_config("mlp"), kCifar), kCifar) == std::vector<int64_t>{4, 10});
  // ...and a size set in the config must match it.
  Node config = trainer::config::load_yaml_string("name: mlp\ninput_size: 784\nhidden_sizes: [256, 128]\ndropout: 0\n",
                                                  "configs/model/my_mlp.yaml")
                    .root;
  const std::string message = error_of([&] { create(config, kCifar); });
  CATCH_CHECK_THAT(message, Catch::Contains("my_mlp.yaml:2"));
  CATCH_CHECK_THAT(message, Catch::Contains("expects 784 inputs"));
  CATCH_CHECK_THAT(message, Catch::Contains("[3, 32, 32] = 3072"));
  CATCH_CHECK_THAT(message, Catch::Contains("model.input_size=3072"));

  config.set("input_size", Node::integer(3072));
  auto model = create(config, kCifar);
  CATCH_CHECK(logits_shape(*model, kCifar) == std::vector<int64_t>{4, 10});
  CATCH_CHECK(trainer::models::parameter_count(*model) == 3072 * 256 + 256 + 256 * 128 + 128 + 1290);

  // Without input_size the model takes the data's size.
  config.erase("input_size");
  CATCH_CHECK(trainer::models::parameter_count(*create(config, kCifar)) == 820874);
}

CATCH_TEST_CASE("mlp: no hidden layer, no dropout", "[models][mlp]") {
  const Node config = trainer::config::load_yaml_string("name: mlp\nhidden_sizes: [7]\ndropout: 0\n", "m.yaml").root;
  auto model = create(config, kFashionMnist);
  CATCH_CHECK(trainer::models::parameter_count(*model) == 784 * 7 + 7 + 7 * 10 + 10);
  // Without dropout, train mode is deterministic.
  const at::Tensor x = at::randn({3, 1, 28, 28});
  model->train();
  CATCH_CHECK(at::equal(model->forward(x), model->forward(x)));
}

CATCH_TEST_CASE("cnn: shipped config, both image shapes", "[models][cnn]") {
  Node config = shipped_config("cnn");
  auto model = create(config, kFashionMnist);
  CATCH_CHECK(logits_shape(*model, kFashionMnist) == std::vector<int64_t>{4, 10});
  // convs 1*32*9 + 32*64*9 (no bias), batch norms 2*(32+64), 64*7*7*128+128, 128*10+10.
  CATCH_CHECK(trainer::models::parameter_count(*model) == 421738);
  CATCH_CHECK(model->flops_per_sample() == 2 * (1 * 32 * 9 * 28 * 28 + 32 * 64 * 9 * 14 * 14 + 3136 * 128 + 128 * 10));

  config.set("in_channels", Node::integer(3));
  auto cifar = create(config, kCifar);
  CATCH_CHECK(logits_shape(*cifar, kCifar) == std::vector<int64_t>{4, 10});
  CATCH_CHECK(trainer::models::parameter_count(*cifar) == 545194);  // flattened 64*8*8
}

CATCH_TEST_CASE("cnn: wrong in_channels and too many blocks are reported", "[models][cnn]") {
  Node config = shipped_config("cnn");
  CATCH_CHECK(logits_shape(*create(config, kCifar), kCifar) == std::vector<int64_t>{4, 10});  // the data's
  config.set("in_channels", Node::integer(1));
  InputSpec cifar = kCifar;
  cifar.channels_key = "data.channels";
  const std::string channels = error_of([&] { create(config, cifar); });
  CATCH_CHECK_THAT(channels, Catch::Contains("model.in_channels is 1 (the cnn model's input channels)"));
  CATCH_CHECK_THAT(channels, Catch::Contains("3 channels, data.channels"));  // both keys named
  CATCH_CHECK_THAT(channels, Catch::Contains("in_channels=3"));

  Node five_blocks = Node::list();
  for (int i = 0; i < 5; ++i) five_blocks.push_back(Node::integer(8));
  config.set("channels", five_blocks);
  const std::string vanish = error_of([&] { create(config, kFashionMnist); });
  CATCH_CHECK_THAT(vanish, Catch::Contains("vanish after 5"));
  CATCH_CHECK_THAT(vanish, Catch::Contains("at most 4"));

  const InputSpec flat{{784}, 10};
  CATCH_CHECK_THAT(error_of([&] { create(shipped_config("cnn"), flat); }), Catch::Contains("model=mlp"));
}

CATCH_TEST_CASE("resnet18: the torchvision-style CIFAR parameter count", "[models][resnet]") {
  Node config = shipped_config("resnet");
  config.set("in_channels", Node::integer(3));
  auto model = create(config, kCifar);
  // torchvision's resnet18 has 11,689,512 parameters; the 3x3 stem has 3*64*9 weights instead of
  // 3*64*49 (-7,680) and the head 512*10+10 instead of 512*1000+1000 (-507,870).
  CATCH_CHECK(trainer::models::parameter_count(*model) == 11173962);
  CATCH_CHECK(logits_shape(*model, kCifar) == std::vector<int64_t>{4, 10});
  // 555,422,720 multiply-adds, counted by hand (stem, 4 stages, 3 downsamples, fc).
  CATCH_CHECK(model->flops_per_sample() == 2 * int64_t{555422720});
  CATCH_CHECK(model->describe() == "resnet18 (width 64, small-image stem): 11,173,962 parameters");

  // State-dict names follow torchvision, so weights can be compared with Python's.
  const auto parameters = model->named_parameters();
  CATCH_CHECK(parameters.contains("conv1.weight"));
  CATCH_CHECK(parameters.contains("layer2.0.downsample.0.weight"));
  CATCH_CHECK(parameters.contains("layer4.1.bn2.bias"));
  CATCH_CHECK(parameters.contains("fc.weight"));
  CATCH_CHECK_FALSE(parameters.contains("layer1.0.downsample.0.weight"));
  CATCH_CHECK(model->named_buffers().contains("layer1.0.bn1.running_mean"));
}

CATCH_TEST_CASE("resnet: Kaiming fan_out init of the convolutions", "[models][resnet]") {
  Node config = shipped_config("resnet");
  auto model = create(config, kFashionMnist);
  // std of N(0, sqrt(2 / fan_out)); fan_out of layer3's 3x3 convs is 256*9.
  const at::Tensor weight = model->named_parameters()["layer3.1.conv1.weight"];
  const double expected = std::sqrt(2.0 / (256 * 9));
  CATCH_CHECK(weight.std().item<double>() == Approx(expected).epsilon(0.02));
  CATCH_CHECK(at::all(model->named_parameters()["layer3.1.bn1.weight"] == 1).item<bool>());
}

CATCH_TEST_CASE("resnet: depths, width and in_channels", "[models][resnet]") {
  Node config = shipped_config("resnet");
  auto fashion = create(config, kFashionMnist);
  CATCH_CHECK(logits_shape(*fashion, kFashionMnist) == std::vector<int64_t>{4, 10});
  CATCH_CHECK(trainer::models::parameter_count(*fashion) == 11173962 - 2 * 64 * 9);

  config.set("in_channels", Node::integer(3));
  config.set("depth", Node::integer(34));
  // torchvision resnet34: 21,797,672, with the same stem and head changes as resnet18.
  CATCH_CHECK(trainer::models::parameter_count(*create(config, kCifar)) == 21282122);
  config.set("depth", Node::integer(50));
  auto resnet50 = create(config, kCifar);
  // torchvision resnet50: 25,557,032; head 2048*10+10 instead of 2048*1000+1000 (-2,028,510).
  CATCH_CHECK(trainer::models::parameter_count(*resnet50) == 23520842);
  CATCH_CHECK(logits_shape(*resnet50, kCifar) == std::vector<int64_t>{4, 10});

  config.set("depth", Node::integer(18));
  config.set("width", Node::integer(16));
  auto narrow = create(config, kCifar);
  CATCH_CHECK(narrow->named_parameters()["fc.weight"].sizes().vec() == std::vector<int64_t>{10, 128});
  CATCH_CHECK(logits_shape(*narrow, kCifar) == std::vector<int64_t>{4, 10});
}

CATCH_TEST_CASE("resnet: unknown depth and channel mismatch are reported", "[models][resnet]") {
  Node config = shipped_config("resnet");
  config.set("depth", Node::integer(20));
  const std::string depth = error_of([&] { create(config, kFashionMnist); });
  CATCH_CHECK_THAT(depth, Catch::Contains("model.depth"));
  CATCH_CHECK_THAT(depth, Catch::Contains("20 is not one of 18, 34, 50, 101 or 152"));

  const Node mine = trainer::config::load_yaml_string("name: resnet\ndepth: 18\nin_channels: 1\nwidth: 8\n",
                                                      "configs/model/my_resnet.yaml")
                        .root;
  const std::string channels = error_of([&] { create(mine, kCifar); });
  CATCH_CHECK_THAT(channels, Catch::Contains("my_resnet.yaml:3"));
  CATCH_CHECK_THAT(channels, Catch::Contains("in_channels=3"));
}

CATCH_TEST_CASE("num_classes must agree with the data", "[models]") {
  const InputSpec five{{1, 28, 28}, 5};
  Node ten = shipped_config("mlp");
  ten.set("num_classes", Node::integer(10));
  const std::string message = error_of([&] { create(ten, five); });
  CATCH_CHECK_THAT(message, Catch::Contains("model.num_classes is 10, but the data has 5 classes (data.num_classes)"));
  CATCH_CHECK_THAT(message, Catch::Contains("model.num_classes=5"));

  // The shipped configs take the data's count (num_classes: null), as does a config without it.
  CATCH_CHECK(logits_shape(*create(shipped_config("cnn"), five), five) == std::vector<int64_t>{4, 5});
  Node config = shipped_config("cnn");
  config.erase("num_classes");
  auto model = create(config, five);
  CATCH_CHECK(logits_shape(*model, five) == std::vector<int64_t>{4, 5});
}

CATCH_TEST_CASE("bad option values name the key", "[models]") {
  Node config = shipped_config("mlp");
  config.set("dropout", Node::floating(1.5));
  CATCH_CHECK_THAT(error_of([&] { create(config, kFashionMnist); }),
                   Catch::Contains("model.dropout: 1.5 is out of range"));
  config = shipped_config("cnn");
  config.set("hidden_size", Node::integer(0));
  CATCH_CHECK_THAT(error_of([&] { create(config, kFashionMnist); }),
                   Catch::Contains("model.hidden_size: 0 is out of range"));
  config = shipped_config("cnn");
  config.set("channels", Node::string("wide"));
  CATCH_CHECK_THAT(error_of([&] { create(config, kFashionMnist); }), Catch::Contains("model.channels"));
}
