// FlopCounter on real LibTorch operators and real models: counts checked against numbers worked
// out by hand (2*M*N*K per matrix product, 2*N*Cout*Hout*Wout*Cin/groups*kh*kw per convolution),
// each operator counted once however it dispatches (linear -> addmm, conv2d -> convolution ->
// mkldnn, autocast's re-dispatch), nothing counted outside the counter or on other threads.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/profiling/flop_counter.h"

#include <map>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/csrc/jit/api/module.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/precision/autocast_guard.h"
#include "trainer/models/model_registry.h"

namespace {

using trainer::engine::FlopCounter;
using trainer::models::InputSpec;

std::shared_ptr<trainer::models::Model> create(const std::string& yaml, const InputSpec& spec) {
  trainer::config::Node root = trainer::config::Node::map();
  root.set("model", trainer::config::load_yaml_string(yaml, "model.yaml").root);
  return trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"), spec);
}

std::shared_ptr<trainer::models::Model> shipped(const std::string& name, const InputSpec& spec) {
  trainer::config::Node root = trainer::config::Node::map();
  root.set("model",
           trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/" + name + ".yaml").root);
  return trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"), spec);
}

// FLOPs of one forward pass of `batch` samples, as the trainer's probe runs it.
std::map<std::string, int64_t> forward_counts(trainer::models::Model& model, const InputSpec& spec, int64_t batch) {
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
  model.eval();
  at::NoGradGuard no_grad;
  FlopCounter counter;
  model.forward(at::randn(shape));
  return counter.by_operator();
}

int64_t sum(const std::map<std::string, int64_t>& counts) {
  int64_t total = 0;
  for (const auto& [name, flops] : counts) total += flops;
  return total;
}

}  // namespace

CATCH_TEST_CASE("matrix products: 2*M*N*K, counted once at the outermost operator") {
  FlopCounter counter;
  at::mm(at::ones({3, 4}), at::ones({4, 5}));
  CATCH_CHECK(counter.total() == 2 * 3 * 4 * 5);

  FlopCounter linear;  // inner counter: the outer one pauses
  at::linear(at::ones({2, 8}), at::ones({16, 8}), at::ones({16}));
  CATCH_CHECK(linear.total() == 2 * 2 * 8 * 16);
  CATCH_CHECK(linear.by_operator() == std::map<std::string, int64_t>{{"aten::linear", 2 * 2 * 8 * 16}});

  FlopCounter matmul;
  at::matmul(at::ones({7, 3, 4}), at::ones({4, 5}));  // batch broadcast over 7
  at::matmul(at::ones({4}), at::ones({4, 5}));        // a vector: one row
  CATCH_CHECK(matmul.by_operator() == std::map<std::string, int64_t>{{"aten::matmul", 2 * 7 * 3 * 4 * 5 + 2 * 4 * 5}});

  FlopCounter added;
  at::addmm(at::ones({3, 5}), at::ones({3, 4}), at::ones({4, 5}));
  at::bmm(at::ones({2, 3, 4}), at::ones({2, 4, 5}));
  CATCH_CHECK(added.total() == 2 * 3 * 4 * 5 + 2 * 2 * 3 * 4 * 5);
  CATCH_CHECK(counter.total() == 2 * 3 * 4 * 5);  // nothing reached the paused outer counter
}

CATCH_TEST_CASE("convolutions: 2*N*Cout*Hout*Wout*(Cin/groups)*kh*kw, transposed per input position") {
  // Named lists: a bare 0 would also convert to the string_view `padding` overloads.
  const std::vector<int64_t> one{1}, two{2}, zero{0};
  FlopCounter strided;
  // 10x10, kernel 3, padding 1, stride 2: 5x5 outputs.
  at::conv2d(at::ones({2, 3, 10, 10}), at::ones({8, 3, 3, 3}), {}, /*stride=*/two, /*padding=*/one);
  CATCH_CHECK(strided.by_operator() ==
              std::map<std::string, int64_t>{{"aten::convolution", 2 * 2 * 8 * 5 * 5 * 3 * 3 * 3}});

  FlopCounter grouped;
  // depthwise: 4 groups of one channel, 6x6 -> 4x4, dilation 1.
  at::conv2d(at::ones({1, 4, 6, 6}), at::ones({4, 1, 3, 3}), {}, one, zero, one, /*groups=*/4);
  CATCH_CHECK(grouped.total() == 2 * 1 * 4 * 4 * 4 * 1 * 3 * 3);

  FlopCounter dilated;
  // 1-d, 20 long, kernel 3 dilated 2 (span 5), padding 0: 16 outputs.
  at::conv1d(at::ones({1, 2, 20}), at::ones({3, 2, 3}), {}, one, zero, /*dilation=*/two);
  CATCH_CHECK(dilated.total() == 2 * 1 * 3 * 16 * 2 * 3);

  FlopCounter transposed;
  // weight [Cin=2, Cout=3, 3, 3] over a 4x4 input.
  at::conv_transpose2d(at::ones({1, 2, 4, 4}), at::ones({2, 3, 3, 3}), {}, /*stride=*/two);
  CATCH_CHECK(transposed.total() == 2 * 1 * (2 * 3 * 3 * 3) * (4 * 4));
}

CATCH_TEST_CASE("elementwise ops, work outside the counter and other threads' work are not counted") {
  at::mm(at::ones({8, 8}), at::ones({8, 8}));  // before
  int64_t total = 0;
  {
    FlopCounter counter;
    at::relu(at::ones({100})).add(1).sum();
    std::thread other([] { at::mm(at::ones({8, 8}), at::ones({8, 8})); });
    other.join();
    total = counter.total();
  }
  at::mm(at::ones({8, 8}), at::ones({8, 8}));  // after
  CATCH_CHECK(total == 0);
}

CATCH_TEST_CASE("under autocast a linear layer is counted once, not again for its re-dispatch") {
  FlopCounter counter;
  {
    trainer::engine::AutocastGuard guard(at::kCPU, at::kBFloat16);
    const at::Tensor out = at::linear(at::ones({2, 8}), at::ones({16, 8}), at::ones({16}));
    CATCH_REQUIRE(out.scalar_type() == at::kBFloat16);
  }
  CATCH_CHECK(counter.by_operator() == std::map<std::string, int64_t>{{"aten::linear", 2 * 2 * 8 * 16}});
}

CATCH_TEST_CASE("a small mlp and a small cnn: forward FLOPs worked out by hand") {
  const InputSpec flat{{12}, 3};
  auto mlp = create("name: mlp\ninput_size: 12\nhidden_sizes: [5]\nnum_classes: 3\ndropout: 0\n", flat);
  // 12 -> 5 -> 3: 2 * (12*5 + 5*3) = 150 per sample. (The C++ frontend's Linear calls aten::addmm
  // itself for 2-d inputs in 1.13: which operator counts depends on the version, the sum does not.)
  CATCH_CHECK(sum(forward_counts(*mlp, flat, 1)) == 150);
  CATCH_CHECK(sum(forward_counts(*mlp, flat, 4)) == 4 * 150);

  const InputSpec image{{1, 8, 8}, 3};
  auto cnn = create("name: cnn\nin_channels: 1\nchannels: [4]\nhidden_size: 6\nnum_classes: 3\ndropout: 0\n", image);
  // conv 1->4, 3x3, padding 1 on 8x8: 2*4*8*8*1*9 = 4608; max pool to 4x4x4 = 64 features;
  // linear 64->6: 2*64*6 = 768; linear 6->3: 2*6*3 = 36. Batch norm, ReLU, pooling: not counted.
  const auto counts = forward_counts(*cnn, image, 1);
  CATCH_CHECK(counts.at("aten::convolution") == 4608);
  CATCH_CHECK(sum(counts) == 4608 + 768 + 36);
  CATCH_CHECK(sum(forward_counts(*cnn, image, 3)) == 3 * (4608 + 768 + 36));
}

CATCH_TEST_CASE("the shipped mlp, cnn and resnet18: counted FLOPs equal the models' own analytical counts") {
  const InputSpec fashion{{1, 28, 28}, 10};
  for (const std::string name : {"mlp", "cnn", "resnet"}) {
    CATCH_INFO(name);
    auto model = shipped(name, fashion);
    CATCH_REQUIRE(model->flops_per_sample() > 0);
    CATCH_CHECK(sum(forward_counts(*model, fashion, 1)) == model->flops_per_sample());
  }
  // The mlp's by hand: 784 -> 256 -> 128 -> 10.
  CATCH_CHECK(sum(forward_counts(*shipped("mlp", fashion), fashion, 1)) == 2 * (784 * 256 + 256 * 128 + 128 * 10));
}

CATCH_TEST_CASE("a TorchScript module: its operators are counted as it runs in the interpreter") {
  torch::jit::Module module("Scripted");
  module.register_parameter("weight", at::ones({784, 10}), /*is_buffer=*/false);
  module.register_parameter("kernel", at::ones({4, 1, 3, 3}), /*is_buffer=*/false);
  module.define(R"(
def forward(self, x):
    features = torch.conv2d(x, self.kernel, None, [2, 2], [1, 1])
    return torch.matmul(x.flatten(1), self.weight) + features.sum()
)");
  at::NoGradGuard no_grad;
  FlopCounter counter;
  module.forward({at::ones({2, 1, 28, 28})});
  // conv 1->4, 3x3, stride 2, padding 1 on 28x28: 14x14 outputs; matmul [2, 784] x [784, 10].
  CATCH_CHECK(counter.by_operator().at("aten::convolution") == 2 * 2 * 4 * 14 * 14 * 1 * 9);
  CATCH_CHECK(counter.total() == 2 * 2 * 4 * 14 * 14 * 9 + 2 * 2 * 784 * 10);
}

CATCH_TEST_CASE("flops_text scales the unit") {
  CATCH_CHECK(trainer::engine::flops_text(469504) == "470 kFLOPs");
  CATCH_CHECK(trainer::engine::flops_text(8.482304e6) == "8.48 MFLOPs");
  CATCH_CHECK(trainer::engine::flops_text(1.1e9) == "1.10 GFLOPs");
  CATCH_CHECK(trainer::engine::flops_text(989.5e12, "/s") == "990 TFLOP/s");
  CATCH_CHECK(trainer::engine::flops_text(12.34e12, "/s") == "12.3 TFLOP/s");
}
